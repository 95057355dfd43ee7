"""nbgrader round trip: the release hides solutions and hidden tests; nbgrader's own Validate
passes on the solved source and fails on the release; nbgrader autograde scores the reference."""

from __future__ import annotations

import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.release import leaked_files

from .conftest import ASSIGNMENT, NOTEBOOK, reference_sources, solved_notebook, write_submission

pytestmark = pytest.mark.slow


def nbgrader(course, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course.nbgrader_root,
                          capture_output=True, text=True, timeout=900)  # fmt: skip


def test_release_holds_no_solutions_and_no_hidden_tests(course):
    release = course.nbgrader_root / "release" / ASSIGNMENT
    assert leaked_files(release) == []
    text = (release / NOTEBOOK).read_text()
    assert "hidden=True" not in text
    bodies = [src.split("\n", 1)[1] for src in reference_sources().values()]
    assert not [b for b in bodies if b.strip() and b in text]
    assert "raise NotImplementedError()" in text
    assert (release / "figures").is_dir()  # the pictures travel with the notebook


def test_nbgrader_validate_passes_on_the_source_and_fails_on_the_release(course):
    source = course.nbgrader_root / "source" / ASSIGNMENT / NOTEBOOK
    done = nbgrader(course, "validate", str(source))
    assert done.returncode == 0 and "Success!" in done.stdout, done.stdout + done.stderr
    done = nbgrader(course, "validate", str(course.nbgrader_root / "release" / ASSIGNMENT / NOTEBOOK))
    assert "VALIDATION FAILED ON 6 CELL(S)" in done.stdout and "Success!" not in done.stdout


def test_nbgrader_autograde_gives_the_reference_full_marks(course, tmp_path):
    from nbgrader.api import Gradebook

    submitted = course.nbgrader_root / "submitted"
    write_submission(submitted, "nbgrader-alice", solved_notebook(course))
    try:
        done = nbgrader(course, "autograde", ASSIGNMENT, "--student=nbgrader-alice", "--force")
        assert done.returncode == 0, done.stderr[-3000:]
        with Gradebook(f"sqlite:///{course.nbgrader_root / 'gradebook.db'}") as gb:
            assert gb.find_submission(ASSIGNMENT, "nbgrader-alice").score == 50
    finally:
        shutil.rmtree(submitted / "nbgrader-alice", ignore_errors=True)
