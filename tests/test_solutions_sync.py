"""One source of truth: the source notebook's solution regions are solutions/collectives.py, and
its grade cells carry the points and calls the task specs define."""

from __future__ import annotations

import ast
import textwrap

import nbformat
import pytest

from autograder.specs import get

from .conftest import ASSIGNMENT, NOTEBOOK, REPO

SPEC = get(ASSIGNMENT)
SOURCE = nbformat.read(REPO / "assignments" / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
CELLS = {c.metadata["nbgrader"]["grade_id"]: c for c in SOURCE.cells if "nbgrader" in c.metadata}
SOLUTIONS = (REPO / "solutions" / "collectives.py").read_text()


def _function(text: str, name: str) -> ast.FunctionDef:
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise AssertionError(f"no function {name}")


def _solution_region(source: str) -> str:
    inside = source.split("### BEGIN SOLUTION\n", 1)[1].split("### END SOLUTION", 1)[0]
    return textwrap.dedent(inside).strip()


def _reference_body(name: str) -> str:
    node = _function(SOLUTIONS, name)
    lines = SOLUTIONS.splitlines()[node.body[0].lineno - 1 : node.end_lineno]
    return textwrap.dedent("\n".join(lines)).strip()


@pytest.mark.parametrize("task", SPEC.tasks, ids=lambda t: t.name)
def test_solution_region_is_the_reference(task):
    cell = CELLS[task.name]
    assert cell.metadata["nbgrader"]["solution"] is True
    assert _solution_region(cell.source) == _reference_body(task.name)
    ours, theirs = _function(cell.source, task.name), _function(SOLUTIONS, task.name)
    assert ast.dump(ours.args) == ast.dump(theirs.args), "the signature must match the reference's"


@pytest.mark.parametrize("task", SPEC.tasks, ids=lambda t: t.name)
def test_grade_cell_points_and_calls_match_the_spec(task):
    cell = CELLS[task.grade_id]
    meta = cell.metadata["nbgrader"]
    assert meta["grade"] is True and meta["locked"] is True
    assert meta["points"] == task.max_score
    visible, hidden = cell.source.split("### BEGIN HIDDEN TESTS")
    assert f"check({task.name})" in visible
    assert f"check({task.name}, hidden=True)" in hidden


def test_notebook_names_its_assignment():
    assert SOURCE.metadata["jaxcourse"]["assignment"] == ASSIGNMENT
    assert sum(t.max_score for t in SPEC.tasks) == 50
