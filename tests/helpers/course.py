"""A private copy of the course, its released notebooks, and submissions built from them."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import nbformat

from autograder.specs import get

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "01_collectives"  # the default wherever a test needs just one assignment
NOTEBOOK = "01_collectives.ipynb"
ASSIGNMENTS = (
    "01_collectives",
    "02_sharded_matmul",
    "04_fsdp_tensor_parallel",
    "05_transformer_parallel",
    "06_pipeline_experts",
    "07_inference",
)
# 03 is graded by tests/trusted/test_training.py (its runs span processes); it is released with the others.
RELEASED = ASSIGNMENTS + ("03_multiprocess_training",)


def copy_course(root: Path):
    """A private copy of the course (sources, config, solutions) under ``root``, with every
    assignment these tests know released and the lectures' records shipped."""
    from autograder.core.course import Course
    from autograder.delivery.release import release

    shutil.copytree(REPO / "solutions", root / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "assignments").mkdir()
    shutil.copy(REPO / "assignments" / "nbgrader_config.py", root / "assignments")
    shutil.copytree(REPO / "assignments" / "source", root / "assignments" / "source")
    course = Course(root)
    release(course)  # every assignment, and the records students' checks judge against
    assert {p.name for p in (course.nbgrader_root / "release").iterdir()} == set(RELEASED)
    return course


def notebook_name(assignment: str) -> str:
    return get(assignment).notebook


def source_notebook(assignment: str) -> nbformat.NotebookNode:
    """The instructor's notebook in the checkout, solutions and hidden tests included."""
    return nbformat.read(REPO / "assignments" / "source" / assignment / notebook_name(assignment), as_version=4)


def release_notebook(course, assignment: str = ASSIGNMENT) -> nbformat.NotebookNode:
    path = course.nbgrader_root / "release" / assignment / notebook_name(assignment)
    return nbformat.read(path, as_version=4)


def functions(text: str) -> dict[str, str]:
    """Each top-level function's source in ``text``, by name."""
    tree = ast.parse(text)
    return {n.name: ast.get_source_segment(text, n) for n in tree.body if isinstance(n, ast.FunctionDef)}


def reference_sources(assignment: str = ASSIGNMENT) -> dict[str, str]:
    """Each reference function's source, as a student would type it into its cell."""
    return functions((REPO / "solutions" / f"{get(assignment).solutions}.py").read_text())


def _fill(nb: nbformat.NotebookNode, sources: dict[str, str]) -> nbformat.NotebookNode:
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and meta.get("grade_id") in sources:
            cell.source = sources[meta["grade_id"]]
    return nb


def solved_notebook(
    course, replace: dict[str, str] | None = None, extra_cell: str | None = None, assignment: str = ASSIGNMENT
) -> nbformat.NotebookNode:
    """The released notebook with every solution cell filled in, as a student would hand it in."""
    nb = _fill(release_notebook(course, assignment), {**reference_sources(assignment), **(replace or {})})
    if extra_cell is not None:
        nb.cells.append(nbformat.v4.new_code_cell(extra_cell))
    return nb


def solved_source(assignment: str, replace: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The checkout's source notebook with each solution cell holding the reference, or
    ``replace``'s function: a submission without a release (the grader takes the locked cells
    from the source anyway)."""
    nb = source_notebook(assignment)
    sources = {**reference_sources(assignment), **(replace or {})}
    solution_cells = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    missing = {c.metadata["nbgrader"]["grade_id"] for c in solution_cells} - set(sources)
    assert not missing, f"no function for the solution cells {sorted(missing)}"
    return _fill(nb, sources)


def write_submission(directory: Path, student: str, nb, assignment: str = ASSIGNMENT) -> Path:
    path = directory / student / assignment / notebook_name(assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# ---------------------------------------------------------------- totals, from the tasks


def full_marks(assignment: str) -> dict[str, float]:
    """Every test a report of ``assignment`` holds (``"<task>: <part>"``), with its points."""
    return {f"{t.name}: {part}": p for t in get(assignment).tasks for part, p in t.points.items()}


def total(assignment: str) -> float:
    return get(assignment).max_score


def visible_total(assignment: str) -> float:
    """What a student's own check can earn: the total less every task's hidden cases."""
    return total(assignment) - sum(t.points.get("hidden values", 0.0) for t in get(assignment).tasks)
