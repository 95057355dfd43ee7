"""Shared fixtures: a private copy of the course, its release, and submissions built from it."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.mesh import use_cpu_devices

# Tests that run JAX in-process need the course's 8 simulated devices, before JAX starts.
use_cpu_devices(8)

REPO = Path(__file__).resolve().parent.parent
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
ASSIGNMENT = "01_collectives"
NOTEBOOK = "01_collectives.ipynb"


def copy_course(root: Path):
    """A private copy of the course (sources, config, solutions) under ``root``, released."""
    from autograder.course import Course
    from autograder.release import release

    shutil.copytree(REPO / "solutions", root / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "assignments").mkdir()
    shutil.copy(REPO / "assignments" / "nbgrader_config.py", root / "assignments")
    shutil.copytree(REPO / "assignments" / "source", root / "assignments" / "source")
    course = Course(root)
    release(course, ASSIGNMENT)
    return course


@pytest.fixture(scope="session")
def course(tmp_path_factory: pytest.TempPathFactory):
    """One released copy of the course for the whole session."""
    return copy_course(tmp_path_factory.mktemp("course"))


def release_notebook(course) -> nbformat.NotebookNode:
    return nbformat.read(course.nbgrader_root / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)


def reference_sources() -> dict[str, str]:
    """Each reference function's source, as a student would type it into its cell."""
    return _functions((REPO / "solutions" / "collectives.py").read_text())


def _functions(text: str) -> dict[str, str]:
    tree = ast.parse(text)
    return {n.name: ast.get_source_segment(text, n) for n in tree.body if isinstance(n, ast.FunctionDef)}


def _literal(text: str, name: str, default=None):
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    return default


class WrongSubmission:
    """A file under tests/submissions: functions that replace the reference's, the points it must
    lose (``EXPECTED``: test name -> score) or the status it must get (``STATUS``)."""

    def __init__(self, path: Path) -> None:
        text = path.read_text()
        self.name = path.stem
        self.functions = _functions(text)
        self.expected: dict[str, float] = _literal(text, "EXPECTED", {})
        self.status: str = _literal(text, "STATUS", "graded")
        self.extra_cell: str | None = _literal(text, "EXTRA_CELL")


def wrong_submissions() -> list[WrongSubmission]:
    return [WrongSubmission(p) for p in sorted(SUBMISSIONS.glob("*.py"))]


def solved_notebook(course, replace: dict[str, str] | None = None, extra_cell: str | None = None):
    """The released notebook with every solution cell filled in, as a student would hand it in."""
    nb = release_notebook(course)
    sources = {**reference_sources(), **(replace or {})}
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id in sources and cell.metadata["nbgrader"].get("solution"):
            cell.source = sources[grade_id]
    if extra_cell is not None:
        nb.cells.append(nbformat.v4.new_code_cell(extra_cell))
    return nb


def write_submission(directory: Path, student: str, nb) -> Path:
    path = directory / student / ASSIGNMENT / NOTEBOOK
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def require_engine_or_skip(reason: str) -> None:
    """Under CI a missing component is a failure; on a laptop the test is skipped, loudly."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this must run)")
    pytest.skip(reason)
