"""Crash-safe, resumable class grading: SIGKILL the grader mid-class, run it again, and every
student is in the gradebook once with the right score; what was graded before the kill is not
graded again, and no sandbox container outlives either run."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

from autograder.grading.sandbox.docker_sandbox import LABEL

from ..helpers.course import ASSIGNMENT, copy_course, full_marks, solved_notebook, total, write_submission
from ..helpers.submissions import WrongSubmission, wrong_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]

WRONG = ("ring_wrong_direction", "uses_all_gather", "layernorm_gathers_rows", "fold_wrong_axis", "unfinished_function")


def _grade(course, image: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "jaxcourse",
        "grade",
        ASSIGNMENT,
        "--sandbox",
        "docker",
        "--image",
        image,
        "--jobs",
        "2",
        "--quiet",
    ]


def test_killed_grader_resumes_and_records_everyone_once(tmp_path, cpu_image, client):
    course = copy_course(tmp_path)
    submitted = course.nbgrader_root / "submitted"
    expected = {"reference": total(ASSIGNMENT)}
    write_submission(submitted, "reference", solved_notebook(course))
    for name in WRONG:
        wrong = wrong_submission(ASSIGNMENT, name)
        write_submission(submitted, name, solved_notebook(course, wrong.functions))
        expected[name] = total(ASSIGNMENT) - sum(_lost(wrong).values())
    graded = course.nbgrader_root / "graded" / ASSIGNMENT
    env = {**os.environ, "JAXCOURSE_ROOT": str(course.root)}

    first = subprocess.Popen(
        _grade(course, cpu_image), cwd=course.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while len(list(graded.glob("*/results.json"))) < 2 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)
    first.wait()
    before = {p.parent.name for p in graded.glob("*/results.json")}
    assert 2 <= len(before) < len(expected), before  # killed mid-class, not before or after

    done = subprocess.run(_grade(course, cpu_image), cwd=course.root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} unchanged since the last run" in done.stdout, done.stdout
    with open(graded / "grades.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["student_id"] for r in rows) == sorted(expected)
    assert {r["student_id"]: float(r["score"]) for r in rows} == expected

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.nbgrader_root / 'gradebook.db'}") as gb:
        submissions = gb.find_assignment(ASSIGNMENT).submissions
        assert sorted(s.student.id for s in submissions) == sorted(expected)  # each student once
        assert {s.student.id: s.score for s in submissions} == expected
    assert client.containers.list(all=True, filters={"label": LABEL}) == []


def _lost(wrong: WrongSubmission) -> dict[str, float]:
    """Points a wrong submission loses: what each test in its EXPECTED keeps less than full marks."""
    points = full_marks(ASSIGNMENT)
    return {name: points[name] - score for name, score in wrong.expected.items()}
