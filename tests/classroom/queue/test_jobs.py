"""What travels on the queue is checked on arrival: each malformed or oversized job or outcome
is refused with the field that is wrong, and the same submission is always the same job."""

from __future__ import annotations

import pytest

from autograder.grading.submission.notebooks import MAX_NOTEBOOK_BYTES
from autograder.grading.submission.report import Report
from classroom import environment
from classroom.queue import jobs

GRADING: jobs.Grading = {"engine": "e1", "course": "c1", "image": "i1"}


def _job(**changes):
    job = dict(jobs.make_job("01_collectives", "ada", b'{"cells": []}', "2026-11-23 18:40:01.000000 UTC", GRADING))
    job.update(changes)
    return job


def test_the_same_submission_is_the_same_job():
    assert _job()["id"] == _job()["id"]
    other = jobs.make_job("01_collectives", "ada", b'{"cells": [1]}', "2026-11-23 18:40:01.000000 UTC", GRADING)
    regraded = jobs.make_job(
        "01_collectives", "ada", b'{"cells": []}', "2026-11-23 18:40:01.000000 UTC", {**GRADING, "engine": "e2"}
    )
    assert len({_job()["id"], other["id"], regraded["id"]}) == 3
    assert jobs.check_job(_job()) == _job()


@pytest.mark.parametrize(
    "job, message",
    [
        ("not a job", "the job is a str, not an object"),
        (_job(extra=1), "the job has the wrong fields: extra"),
        (_job(version=2), "job version 2 is not 1"),
        (_job(student=3), "job field 'student' must be str"),
        (_job(student="../bob"), "job student '../bob' is not a name"),
        (_job(timestamp=5), "job field 'timestamp' must be text or null"),
        (_job(grading={"engine": "e1"}), "the job grading has the wrong fields: course, image"),
        (_job(notebook="x" * (jobs.MAX_JOB_BYTES + 1)), "MB allowed"),
    ],
    ids=[
        "not-an-object",
        "extra-field",
        "version",
        "student-type",
        "student-path",
        "timestamp",
        "grading",
        "oversized",
    ],
)
def test_a_malformed_job_is_refused_with_the_field(job, message):
    with pytest.raises(jobs.JobError) as err:
        jobs.check_job(job)
    assert message in str(err.value)


def test_a_notebook_too_large_never_becomes_a_job():
    with pytest.raises(jobs.JobError, match="larger than 20 MB"):
        jobs.make_job("01_collectives", "ada", b" " * (MAX_NOTEBOOK_BYTES + 1), None, GRADING)


KEY = jobs.outcome_key("redis://:pw@redis:6379/0")


def test_an_outcome_must_carry_a_well_formed_report():
    report = Report("ada", "01_collectives", "graded", "", [], "f" * 8).to_json()
    good = {"version": 1, "id": "x", "worker": "h", "seconds": 1.5, "report": report}
    assert jobs.report_of(jobs.check_outcome(jobs.signed(good, KEY), KEY)).student == "ada"
    with pytest.raises(jobs.JobError, match="outcome report is malformed"):
        jobs.check_outcome(jobs.signed({**good, "report": {"student": "ada"}}, KEY), KEY)
    with pytest.raises(jobs.JobError, match="outcome field 'seconds' must be float"):
        jobs.check_outcome(jobs.signed({**good, "seconds": "1"}, KEY), KEY)


def test_an_outcome_not_signed_with_the_classs_key_is_refused(monkeypatch):
    """Whoever can write to Redis (the broker's password) cannot hand the recorder a grade: a
    forged outcome, one signed with another key, or a signed one changed afterwards, is refused."""
    report = Report("ada", "01_collectives", "graded", "", [], "f" * 8).to_json()
    outcome = {"version": 1, "id": "x", "worker": "h", "seconds": 1.5, "report": report}
    monkeypatch.setenv(environment.QUEUE_KEY, "the class's own secret")
    key = jobs.outcome_key("redis://:pw@redis:6379/0")
    assert key != KEY  # the broker's password alone does not make the class's key
    for forged in (
        {**outcome, "signature": "0" * 64},
        jobs.signed(outcome, KEY),
        {**jobs.signed(outcome, key), "report": {**report, "score": 50.0}},
    ):
        with pytest.raises(jobs.JobError, match="signature is wrong: no worker of this class signed it"):
            jobs.check_outcome(forged, key)
    assert jobs.check_outcome(jobs.signed(outcome, key), key)["id"] == "x"
