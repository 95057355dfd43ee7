"""Shared fixtures: a private copy of the course, its release, and submissions built from it."""

from __future__ import annotations

import ast
import os
import shutil
import warnings
from pathlib import Path

import nbformat
import pytest

from autograder.grading import images
from autograder.mesh import use_cpu_devices
from autograder.specs import get

# Tests that run JAX in-process need the course's 8 simulated devices, before JAX starts.
use_cpu_devices(8)

REPO = Path(__file__).resolve().parent.parent
# 01's wrong submissions; each later assignment's live in a folder of its own name under it.
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
ASSIGNMENT = "01_collectives"  # the default wherever a test needs just one assignment
NOTEBOOK = "01_collectives.ipynb"
ASSIGNMENTS = ("01_collectives", "02_sharded_matmul")
# 03 is graded by tests/test_training.py (its runs span processes); it is released with the others.
RELEASED = ASSIGNMENTS + ("03_multiprocess_training",)


def submissions_dir(assignment: str) -> Path:
    return SUBMISSIONS if assignment == ASSIGNMENT else SUBMISSIONS / assignment


def copy_course(root: Path):
    """A private copy of the course (sources, config, solutions) under ``root``, with every
    assignment these tests know released."""
    from autograder.core.course import Course
    from autograder.delivery.release import release

    shutil.copytree(REPO / "solutions", root / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "assignments").mkdir()
    shutil.copy(REPO / "assignments" / "nbgrader_config.py", root / "assignments")
    shutil.copytree(REPO / "assignments" / "source", root / "assignments" / "source")
    course = Course(root)
    for assignment in RELEASED:
        release(course, assignment)
    return course


@pytest.fixture(scope="session")
def course(tmp_path_factory: pytest.TempPathFactory):
    """One released copy of the course for the whole session."""
    return copy_course(tmp_path_factory.mktemp("course"))


def notebook_name(assignment: str) -> str:
    return get(assignment).notebook


def release_notebook(course, assignment: str = ASSIGNMENT) -> nbformat.NotebookNode:
    path = course.nbgrader_root / "release" / assignment / notebook_name(assignment)
    return nbformat.read(path, as_version=4)


def reference_sources(assignment: str = ASSIGNMENT) -> dict[str, str]:
    """Each reference function's source, as a student would type it into its cell."""
    return _functions((REPO / "solutions" / f"{get(assignment).solutions}.py").read_text())


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
    lose (``EXPECTED``: test name -> score) or the status it must get (``STATUS``), and words each
    failed test's message must contain (``REASONS``: test name -> text)."""

    def __init__(self, path: Path) -> None:
        text = path.read_text()
        self.name = path.stem
        self.functions = _functions(text)
        self.expected: dict[str, float] = _literal(text, "EXPECTED", {})
        self.reasons: dict[str, str] = _literal(text, "REASONS", {})
        self.status: str = _literal(text, "STATUS", "graded")
        self.extra_cell: str | None = _literal(text, "EXTRA_CELL")


def wrong_submissions(assignment: str = ASSIGNMENT) -> list[WrongSubmission]:
    return [WrongSubmission(p) for p in sorted(submissions_dir(assignment).glob("*.py"))]


def solved_notebook(
    course, replace: dict[str, str] | None = None, extra_cell: str | None = None, assignment: str = ASSIGNMENT
):
    """The released notebook with every solution cell filled in, as a student would hand it in."""
    nb = release_notebook(course, assignment)
    sources = {**reference_sources(assignment), **(replace or {})}
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id in sources and cell.metadata["nbgrader"].get("solution"):
            cell.source = sources[grade_id]
    if extra_cell is not None:
        nb.cells.append(nbformat.v4.new_code_cell(extra_cell))
    return nb


def write_submission(directory: Path, student: str, nb, assignment: str = ASSIGNMENT) -> Path:
    path = directory / student / assignment / notebook_name(assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# ---------------------------------------------------------------- Docker

IN_CI = os.environ.get("CI") == "true"


def unavailable(what: str, reason: str) -> None:
    """Fail under CI; elsewhere skip, loudly (a warning and the skip reason in the summary)."""
    if IN_CI:
        pytest.fail(f"CI=true requires {what}: {reason}", pytrace=False)
    warnings.warn(f"docker tests skipped: {what} unavailable: {reason}", stacklevel=2)
    pytest.skip(f"{what} unavailable: {reason}")


@pytest.fixture(scope="session")
def client():
    try:
        return images.connect()
    except images.EngineUnavailable as err:
        unavailable("a Docker engine", str(err))


@pytest.fixture(scope="session")
def sources(course) -> images.Sources:
    """The checkout's lectures and a fresh release of its assignments."""
    return images.Sources(REPO, REPO / "course", course.nbgrader_root / "release")


@pytest.fixture(scope="session")
def cpu_image(client, sources) -> str:
    """``jaxcourse:cpu``, built once per session (seconds when Docker's layer cache is warm)."""
    images.build("cpu", client=client, sources=sources)
    return images.tag("cpu")
