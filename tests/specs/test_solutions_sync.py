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
from ..helpers.rules import GUIDE, points_total


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
    where = f"solutions/{get(assignment).solutions}.py's {name}"
    assert solution_region(cell.source) == _reference_body(solutions, name), (
        f"the solution cell {name} differs from {where}: paste the function's body, byte for byte, "
        f"between ### BEGIN SOLUTION and ### END SOLUTION ({GUIDE})"
    )
    ours, theirs = function(cell.source, name), function(solutions, name)
    assert ast.dump(ours.args) == ast.dump(theirs.args), f"the solution cell's signature must be {where}'s"


@pytest.mark.parametrize("assignment, task", TASKS, ids=[f"{a}/{t.name}" for a, t in TASKS])
def test_every_task_has_a_solution_cell(assignment, task):
    cell = _cells(assignment).get(task.name)
    assert cell is not None and cell.metadata["nbgrader"]["solution"] is True, (
        f"{assignment}'s source notebook has no solution cell {task.name}: add a code cell with nbgrader "
        f'metadata "grade_id": "{task.name}", "solution": true ({GUIDE})'
    )


@pytest.mark.parametrize("assignment, task", TASKS, ids=[f"{a}/{t.name}" for a, t in TASKS])
def test_grade_cell_points_and_calls_match_the_spec(assignment, task):
    cell = _cells(assignment).get(task.grade_id)
    assert cell is not None, (
        f"{assignment}'s source notebook has no grade cell {task.grade_id}: add a locked code cell with "
        f'nbgrader metadata "grade_id": "{task.grade_id}", "grade": true, "points": {task.max_score:g} ({GUIDE})'
    )
    meta = cell.metadata["nbgrader"]
    assert meta["grade"] is True and meta["locked"] is True, f"{task.grade_id} must be a locked grade cell"
    assert meta["points"] == task.max_score, (
        f"{task.grade_id}'s points are {meta['points']:g}, its parts in the spec {task.max_score:g}: set the "
        f"cell's nbgrader points to {task.max_score:g}"
    )
    calls = f"check({task.name})\n### BEGIN HIDDEN TESTS\ncheck({task.name}, hidden=True)\n### END HIDDEN TESTS"
    visible, _, hidden = cell.source.partition("### BEGIN HIDDEN TESTS")
    assert f"check({task.name})" in visible and f"check({task.name}, hidden=True)" in hidden, (
        f"{task.grade_id} must call check() on the visible cases, then on the hidden ones:\n{calls}"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_names_its_assignment(assignment):
    assert source_notebook(assignment).metadata["jaxcourse"]["assignment"] == assignment
    assert not (problem := points_total(get(assignment))), problem
