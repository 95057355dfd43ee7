"""The one recorder: every way of grading writes a report through it, so the latest submission
wins and the feedback rule holds whoever graded (``jaxcourse grade``, a class's grading service,
formgrader's Autograde; the service's and formgrader's own tests run them through it)."""

from __future__ import annotations

import json
import warnings

import pytest
from nbgrader.api import Gradebook

from autograder.core import records
from autograder.core.course import tool_env
from autograder.grading.record.recorder import SUBMISSION, Recorder
from autograder.grading.submission.report import Report

ASSIGNMENT, T0, T1 = "01_collectives", "2026-11-30 12:00:00.000000 UTC", "2026-11-30 13:00:00.000000 UTC"


def _report(student: str, points: float, status: str = "graded", message: str = "") -> Report:
    tests = [
        records.TestResult("ring: values", "ring", points, 2.0, "passed" if points else "failed", "", "visible"),
        records.TestResult("ring: hidden values", "ring", 0.0, 1.0, "failed", "wrong on a hidden mesh", "hidden"),
    ]
    return Report(student, ASSIGNMENT, status, message, tests)


@pytest.fixture
def recorder(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", tool_env()["PATH"])  # nbgrader's Gradebook runs alembic by name
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:
        gb.add_assignment(ASSIGNMENT)
    return Recorder(tmp_path, tmp_path / "graded" / ASSIGNMENT, ASSIGNMENT)


def _kept(recorder: Recorder, student: str) -> Report:
    return Report.from_json(json.loads((recorder.out / student / "results.json").read_text()))


def test_the_latest_submission_wins_in_whatever_order_they_are_recorded(recorder):
    assert recorder.record(_report("ada", 2.0), T1)  # the later one, graded first
    assert not recorder.record(_report("ada", 0.0), T0)  # the earlier one, graded after it
    assert _kept(recorder, "ada").score == 2.0
    assert (recorder.out / "ada" / SUBMISSION).read_text() == T1 + "\n"
    assert "Score: 2 / 3" in (recorder.out / "ada" / "feedback.md").read_text()  # the instructor's copy
    with Gradebook(f"sqlite:///{recorder.nbgrader_root}/gradebook.db") as gb:
        assert gb.find_submission(ASSIGNMENT, "ada").timestamp.hour == 13


def test_recording_a_submission_warns_of_nothing(recorder):
    """nbgrader's ``add_submission`` makes its rows before it adds them to the session; a flush
    meanwhile would make SQLAlchemy 2 say so three times on every class run's terminal. The
    recorder keeps the session from flushing until nbgrader commits them, whole."""
    with warnings.catch_warnings(record=True) as caught:
        recorder.record(_report("ann", 2.0), T0)
        warnings.warn("a warning of the grader's own", UserWarning, stacklevel=1)  # still said
    assert [str(w.message) for w in caught] == ["a warning of the grader's own"]
    with Gradebook(f"sqlite:///{recorder.nbgrader_root}/gradebook.db") as gb:
        assert gb.find_submission(ASSIGNMENT, "ann").timestamp is not None  # the rows it warned of


def test_a_later_submission_replaces_an_earlier_one_and_a_regrade_of_the_same_one_replaces_itself(recorder):
    assert recorder.record(_report("bob", 0.0), T0)
    assert recorder.record(_report("bob", 2.0), T1)
    assert recorder.record(_report("bob", 1.0), T1)  # graded again (--force): the same submission
    assert _kept(recorder, "bob").score == 1.0


def test_a_notebook_graded_where_it_lies_has_no_time_and_is_kept(recorder):
    assert recorder.record(_report("cy", 2.0), None)
    assert _kept(recorder, "cy").score == 2.0 and not (recorder.out / "cy" / SUBMISSION).exists()


@pytest.mark.parametrize(
    "rule, shown",
    [("all", ["ring: values", "ring: hidden values"]), ("visible", ["ring: values"]), ("none", None)],
)
def test_the_student_reads_what_the_rule_allows_latest_or_not(recorder, tmp_path, rule, shown):
    ruled = Recorder(recorder.nbgrader_root, recorder.out, recorder.notebook, rule)
    delivered: list[Report] = []
    ruled.record(_report("dee", 2.0), T1, delivered.append)
    ruled.record(_report("dee", 0.0), T0, delivered.append)  # not kept, yet its student reads it
    assert [[t.name for t in r.tests] for r in delivered] == ([shown, shown] if shown else [])
    assert [t.name for t in _kept(ruled, "dee").tests] == ["ring: values", "ring: hidden values"]  # all kept


def test_why_a_notebook_could_not_be_read_is_delivered_even_when_feedback_waits(recorder):
    ruled = Recorder(recorder.nbgrader_root, recorder.out, recorder.notebook, "none")
    delivered: list[Report] = []
    ruled.record(_report("eve", 0.0, "invalid", "the notebook is not JSON"), T0, delivered.append)
    assert [(r.message, r.tests) for r in delivered] == [("the notebook is not JSON", [])]


def test_an_unknown_feedback_rule_is_refused_with_the_choices(tmp_path):
    with pytest.raises(ValueError, match="feedback rule 'some': choose one of all, visible, none"):
        Recorder(tmp_path, tmp_path, ASSIGNMENT, "some")
