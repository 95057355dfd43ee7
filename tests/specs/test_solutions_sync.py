"""One source of truth: each source notebook's solution regions are its solutions/ module, and its
grade cells carry the points and calls the task specs define."""

from __future__ import annotations

import ast
import textwrap

import nbformat
import pytest

from autograder.specs import get

from ..helpers.course import ASSIGNMENTS, REPO, source_notebook
from ..helpers.notebooks import cells_by_grade_id, function, solution_region


def _cells(assignment: str) -> dict[str, nbformat.NotebookNode]:
    return cells_by_grade_id(source_notebook(assignment))


def _solutions(assignment: str) -> str:
    return (REPO / "solutions" / f"{get(assignment).solutions}.py").read_text()


def _reference_body(text: str, name: str) -> str:
    """Everything below the ``def`` line, comments included."""
    node = function(text, name)
    lines = text.splitlines()[node.lineno : node.end_lineno]
    return textwrap.dedent("\n".join(lines)).strip()


SOLUTION_CELLS = [
    (a, grade_id)
    for a in ASSIGNMENTS
    for grade_id, cell in _cells(a).items()
    if cell.metadata["nbgrader"].get("solution")
]
TASKS = [(a, t) for a in ASSIGNMENTS for t in get(a).tasks]


@pytest.mark.parametrize("assignment, name", SOLUTION_CELLS, ids=[f"{a}/{n}" for a, n in SOLUTION_CELLS])
def test_solution_region_is_the_reference(assignment, name):
    """Every solution cell, graded or not, holds its function from solutions/, byte for byte."""
    cell, solutions = _cells(assignment)[name], _solutions(assignment)
    assert solution_region(cell.source) == _reference_body(solutions, name)
    ours, theirs = function(cell.source, name), function(solutions, name)
    assert ast.dump(ours.args) == ast.dump(theirs.args), "the signature must match the reference's"


@pytest.mark.parametrize("assignment, task", TASKS, ids=[f"{a}/{t.name}" for a, t in TASKS])
def test_every_task_has_a_solution_cell(assignment, task):
    assert _cells(assignment)[task.name].metadata["nbgrader"]["solution"] is True


@pytest.mark.parametrize("assignment, task", TASKS, ids=[f"{a}/{t.name}" for a, t in TASKS])
def test_grade_cell_points_and_calls_match_the_spec(assignment, task):
    cell = _cells(assignment)[task.grade_id]
    meta = cell.metadata["nbgrader"]
    assert meta["grade"] is True and meta["locked"] is True
    assert meta["points"] == task.max_score
    visible, hidden = cell.source.split("### BEGIN HIDDEN TESTS")
    assert f"check({task.name})" in visible
    assert f"check({task.name}, hidden=True)" in hidden


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_names_its_assignment(assignment):
    assert source_notebook(assignment).metadata["jaxcourse"]["assignment"] == assignment
    assert sum(t.max_score for t in get(assignment).tasks) == 50
