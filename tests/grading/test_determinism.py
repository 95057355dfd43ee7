"""Deterministic grading: the same class graded twice, the second time in the reverse order and
with another number of jobs, gives byte-identical results and feedback for every student.

results.json holds no time of day and no duration (those live in the command's summary and in
nbgrader's gradebook), so the files can be compared whole."""

from __future__ import annotations

import pytest

from autograder.grading.record import batch

from ..helpers.course import ASSIGNMENT, solved_notebook, total, write_submission
from ..helpers.submissions import wrong_submission

pytestmark = pytest.mark.slow

# A right notebook (its messages carry the traffic per device), a wrong one (the largest error on
# each device) and one that raises.
CLASS = {"ada": None, "cy": "layernorm_device0_only", "dee": "raises_at_import"}
FILES = ("results.json", "feedback.md", "feedback.html")


def test_grading_is_byte_identical_in_any_order_and_any_jobs(course, tmp_path, monkeypatch):
    submitted = tmp_path / "submitted"
    for student, wrong in CLASS.items():
        sub = wrong_submission(ASSIGNMENT, wrong) if wrong else None
        nb = solved_notebook(course, sub.functions if sub else None, sub.extra_cell if sub else None)
        write_submission(submitted, student, nb)
    first = tmp_path / "first"
    run = batch.grade_class(ASSIGNMENT, course, submitted, first, jobs=2, progress=False, sandbox="process")
    assert sorted(r.student for r in run.reports) == sorted(CLASS)

    order: list[str] = []
    found = batch.find_submissions

    def reversed_order(*args):
        todo = list(reversed(found(*args)))
        order.extend(s.student for s in todo)
        return todo

    monkeypatch.setattr(batch, "find_submissions", reversed_order)
    second = tmp_path / "second"
    again = batch.grade_class(
        ASSIGNMENT, course, submitted, second, jobs=1, progress=False, sandbox="process", force=True
    )
    assert order == sorted(CLASS, reverse=True) and again.reused == 0

    scores = {r.student: r.score for r in run.reports}
    assert scores["ada"] == total(ASSIGNMENT) and scores["dee"] == 0 and 0 < scores["cy"] < total(ASSIGNMENT)
    for student in CLASS:
        for name in FILES:
            assert (second / student / name).read_bytes() == (first / student / name).read_bytes(), (student, name)
    assert (second / "grades.csv").read_bytes() == (first / "grades.csv").read_bytes()
