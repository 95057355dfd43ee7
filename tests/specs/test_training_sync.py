"""One source of truth for 03_multiprocess_training: the source notebook's solution regions are
solutions/multiprocess_training.py, and its grade cells carry the spec's points and calls."""

from __future__ import annotations

import ast
import textwrap

import pytest

from autograder.core.course import Course
from autograder.specs import get

from ..helpers.course import REPO, source_notebook
from ..helpers.notebooks import cells_by_grade_id, function, solution_region
from ..helpers.rules import points_total

ASSIGNMENT = "03_multiprocess_training"
SPEC = get(ASSIGNMENT)
SOURCE = source_notebook(ASSIGNMENT)
CELLS = cells_by_grade_id(SOURCE)
SOLUTIONS = (REPO / "solutions" / "multiprocess_training.py").read_text()


def _reference_body(name: str) -> str:
    node = function(SOLUTIONS, name)
    lines = SOLUTIONS.splitlines()[node.body[0].lineno - 1 : node.end_lineno]
    return textwrap.dedent("\n".join(lines)).strip()


@pytest.mark.parametrize("task", SPEC.tasks, ids=lambda t: t.name)
def test_solution_region_is_the_reference(task):
    cell = CELLS[task.name]
    assert cell.metadata["nbgrader"]["solution"] is True
    assert solution_region(cell.source) == _reference_body(task.name)
    ours, theirs = function(cell.source, task.name), function(SOLUTIONS, task.name)
    assert ast.dump(ours.args) == ast.dump(theirs.args), "the signature must match the reference's"


@pytest.mark.parametrize("task", SPEC.tasks, ids=lambda t: t.name)
def test_grade_cell_points_and_calls_match_the_spec(task):
    cell = CELLS[task.grade_id]
    meta = cell.metadata["nbgrader"]
    assert meta["grade"] is True and meta["locked"] is True
    assert meta["points"] == task.max_score
    assert cell.source.startswith(f"check({task.name})")
    hidden = Course(REPO).hidden_cases(SPEC, task.name)
    assert (f"check({task.name}, hidden=True)" in cell.source) == bool(hidden)


def test_notebook_names_its_assignment_and_the_points_add_up():
    assert SOURCE.metadata["jaxcourse"]["assignment"] == ASSIGNMENT
    assert not (problem := points_total(SPEC)), problem
