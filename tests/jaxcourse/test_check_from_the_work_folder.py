"""`jaxcourse check` from a student's work folder (`jaxcourse lab --local`'s ~/jaxcourse-work):
outside the course's checkout and with no JAXCOURSE_EXPECTED, it judges against the records of
the checkout the command was installed from (`make venv`'s editable install), and where that
checkout has none, it says in one line what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

from autograder.core import environment
from autograder.engine import images

from ..helpers.course import ASSIGNMENT, NOTEBOOK, REPO, solved_notebook, visible_total

JAXCOURSE = [sys.executable, "-m", "jaxcourse"]


def installed_checkout(root: Path, records: Path | None) -> Path:
    """A checkout the packages run from, as an editable install runs them: the repository's
    packages and docker/, and ``records`` as what its `jaxcourse release` made."""
    checkout = root / "checkout"
    checkout.mkdir()
    for name in (*images.PACKAGES, "docker"):
        (checkout / name).symlink_to(REPO / name)
    if records is not None:
        (checkout / "assignments").mkdir()
        (checkout / "assignments" / "expected").symlink_to(records)
    return checkout


def check_in(work: Path, checkout: Path, notebook: Path) -> subprocess.CompletedProcess[str]:
    """`python -m jaxcourse check NOTEBOOK` in ``work``, the packages imported from ``checkout``."""
    env = {k: v for k, v in os.environ.items() if k not in (environment.EXPECTED, environment.ROOT)}
    env |= {"PYTHONPATH": str(checkout), "PYTHONUNBUFFERED": "1"}  # ahead of the venv's own install
    return subprocess.run(
        [*JAXCOURSE, "check", str(notebook)], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )


def work_folder(tmp_path: Path) -> Path:
    work = tmp_path / "jaxcourse-work"
    work.mkdir()
    assert not work.resolve().is_relative_to(REPO)
    return work


def test_check_from_the_work_folder_finds_the_installed_course_s_records(course, tmp_path):
    work = work_folder(tmp_path)
    checkout = installed_checkout(tmp_path, course.nbgrader_root / "expected")
    notebook = work / ASSIGNMENT / NOTEBOOK
    notebook.parent.mkdir()
    nbformat.write(solved_notebook(course), notebook)
    done = check_in(work, checkout, notebook)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["test", "points", "status", "reason"], done.stdout
    assert f"score {visible_total(ASSIGNMENT):g} / {visible_total(ASSIGNMENT):g}" in lines, done.stdout


def test_check_without_records_says_what_to_do_in_one_line(course, tmp_path):
    work = work_folder(tmp_path)
    checkout = installed_checkout(tmp_path, None)
    notebook = work / NOTEBOOK
    nbformat.write(solved_notebook(course), notebook)
    done = check_in(work, checkout, notebook)
    assert done.returncode == 2 and not done.stdout and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"run `jaxcourse release` in the course's checkout ({checkout})" in done.stderr, done.stderr
    assert f"or set {environment.EXPECTED} to the folder that holds them" in done.stderr, done.stderr
