"""The reference scores full marks; each known-wrong submission loses exactly what it should."""

from __future__ import annotations

import pytest

from autograder.grade import Grader, grader_for

from .conftest import ASSIGNMENT, WrongSubmission, solved_notebook, write_submission, wrong_submissions

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def grader(course) -> Grader:
    # Short limits so that the loops in the library cost seconds, not minutes.
    return grader_for(ASSIGNMENT, course, timeout=40, test_timeout=4, startup=30)


@pytest.fixture(scope="module")
def full_marks(grader) -> dict[str, float]:
    return {f"{t.name}: {part}": p for t in grader.tasks for part, p in t.points.items()}


def test_reference_scores_full_marks(grader, course, tmp_path, full_marks):
    report = grader.grade("reference", write_submission(tmp_path, "reference", solved_notebook(course)))
    assert report.status == "graded", report.message
    failed = {t.name: t.message for t in report.tests if t.status != "passed"}
    assert not failed
    assert {t.name: t.score for t in report.tests} == full_marks
    assert report.score == report.max_score == 50


def test_hidden_cases_are_graded(grader):
    hidden = [c for t in grader.tasks for c in t.cases if c.hidden]
    meshes = {c.mesh for c in hidden if not c.args}
    assert "4x2:x,y" in meshes and {c.dtype for c in hidden} >= {"bfloat16", "int32", "float32"}


@pytest.mark.parametrize("wrong", wrong_submissions(), ids=lambda w: w.name)
def test_wrong_submission_loses_exactly_its_points(
    wrong: WrongSubmission, grader, course, tmp_path, full_marks
):
    nb = solved_notebook(course, wrong.functions, wrong.extra_cell)
    report = grader.grade(wrong.name, write_submission(tmp_path, wrong.name, nb))
    assert report.status == wrong.status, report.message
    if wrong.status != "graded":
        assert report.score == 0 and report.message
        assert all(t.message == report.message for t in report.tests)
        return
    scores = {t.name: t.score for t in report.tests}
    assert scores == {**full_marks, **wrong.expected}
    for test in report.tests:
        if test.name in wrong.expected:
            assert test.status == "failed" and test.message, test.name
