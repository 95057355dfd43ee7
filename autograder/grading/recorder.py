"""The one writer of a grade. Every way of grading (``jaxcourse grade`` here or on a queue, a
class's grading service on Submit, formgrader's Autograde in an instructor's server) records a
report through ``Recorder.record``, which owns every file a grade is written to and both rules:

* **the latest submission wins**: a report of an older submission than the one already recorded
  for that student (``submission.txt``, its time) never replaces it;
* **feedback as the class allows**: the page a student reads now holds every test, the visible
  ones, or (``none``, until ``jaxcourse release-feedback``) nothing but why a notebook could not
  be read.

``results.json`` is the truth: the feedback pages, the gradebook's row and ``grades.csv`` are made
from it (docs/grading.md). Where the student reads her feedback is the caller's: a class passes
the exchange's delivery; ``jaxcourse grade`` delivers nothing until feedback is released.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.files import write_atomic
from . import feedback, gradebook
from .report import Report

FEEDBACK_RULES = ("all", "visible", "none")
SUBMISSION = "submission.txt"  # beside results.json: the time of the submission it grades

# Where the student reads her feedback now (a class's exchange), given what she may read.
Deliver = Callable[[Report], None]


@dataclass(frozen=True)
class Recorder:
    """The grades of one assignment of one class."""

    nbgrader_root: Path  # the course's (or the class's) root: its gradebook.db
    out: Path  # the assignment's results folder: one folder per student
    notebook: str  # the notebook's name in the gradebook (the assignment's notebook, no suffix)
    rule: str = "all"  # the feedback a student may read now: one of FEEDBACK_RULES

    def __post_init__(self) -> None:
        if self.rule not in FEEDBACK_RULES:
            raise ValueError(f"feedback rule {self.rule!r}: choose one of {', '.join(FEEDBACK_RULES)}")

    def record(self, report: Report, timestamp: str | None, deliver: Deliver | None = None) -> bool:
        """Keep ``report`` (of the submission made at ``timestamp``) unless a later submission's
        is kept already: the instructor's feedback pages, results.json and the gradebook's row,
        then the submission's time. Then, latest or not, the student's page as the rule allows.
        Whether it was kept."""
        folder = self.out / report.student
        latest = self.is_latest(report.student, timestamp)
        if latest:
            feedback.write(folder, report)
            gradebook.keep(self.nbgrader_root, self.notebook, folder, report, timestamp)
            if timestamp is not None:
                write_atomic(folder / SUBMISSION, timestamp + "\n")
        page = shown(report, self.rule)
        if deliver is not None and page is not None:
            deliver(page)
        return latest

    def is_latest(self, student: str, timestamp: str | None) -> bool:
        """Whether no later submission of ``student``'s has been kept (one without a time, a
        notebook graded where it lies, is the latest by definition)."""
        stamp = self.out / student / SUBMISSION
        return timestamp is None or not stamp.is_file() or stamp.read_text().strip() <= timestamp


def shown(report: Report, rule: str) -> Report | None:
    """What the student may read now: every test, the visible ones, or (``none``) nothing until
    feedback is released, but for why a notebook could not be read at all, which tells nothing
    of the tests."""
    if rule == "all":
        return report
    if rule == "visible":
        return replace(report, tests=[t for t in report.tests if t.visibility == "visible"])
    return replace(report, tests=[]) if report.status == "invalid" else None
