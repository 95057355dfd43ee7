"""nbgrader's gradebook and the class-wide exports: grades land where nbgrader looks for them.

Writes are idempotent: grading a student again replaces their scores, so an interrupted run
can simply be run again.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import JaxcourseError
from ...core.files import write_atomic

if TYPE_CHECKING:
    from ..submission.report import Report

CSV_COLUMNS = ("student_id", "assignment", "score", "max_score", "status")


class GradebookError(JaxcourseError):
    """The gradebook does not know the assignment (it has not been released)."""


def record(db_url: str, notebook: str, report: Report, timestamp: str | None) -> None:
    """Write one submission's per-grade-cell scores in one commit."""
    from nbgrader.api import Gradebook, MissingEntry

    from ...core.course import tool_env

    os.environ["PATH"] = tool_env()["PATH"]  # nbgrader's Gradebook runs `alembic` by name
    per_cell: dict[str, float] = defaultdict(float)
    for test in report.tests:
        per_cell[test.grade_id] += test.score
    with Gradebook(db_url) as gb:
        try:
            gb.find_assignment(report.assignment)
        except MissingEntry:
            raise GradebookError(
                f"the gradebook has no {report.assignment}: run `jaxcourse release {report.assignment}` first"
            ) from None
        gb.update_or_create_student(report.student)
        extra = {"timestamp": timestamp} if timestamp else {}
        # nbgrader makes a new submission's rows before it adds them to the session: a flush of
        # the session meanwhile could not take them, and SQLAlchemy 2 warns of each on the
        # instructor's terminal. It commits them whole just after, which no_autoflush leaves be.
        with gb.db.no_autoflush:
            gb.update_or_create_submission(report.assignment, report.student, **extra)
        for grade_id, score in per_cell.items():
            try:
                grade = gb.find_grade(grade_id, notebook, report.assignment, report.student)
            except MissingEntry:
                continue  # a cell the released notebook no longer grades
            grade.auto_score = score
            # as nbgrader's own SaveAutoGrades marks it: a grader's manual score overrides, so review it
            grade.needs_manual_grade = grade.manual_score is not None
        gb.db.commit()


def keep(nbgrader_root: Path, notebook: str, out: Path, report: Report, timestamp: str | None) -> None:
    """The one way a report is kept: its results.json in ``out`` (the student's graded folder),
    then its row in the course's gradebook. A run stopped between the two finds the results on
    its next run and records them again."""
    write_results(out / "results.json", report)
    record(f"sqlite:///{nbgrader_root / 'gradebook.db'}", notebook, report, timestamp)


def write_csv(path: Path, reports: Iterable[Report]) -> None:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    for r in sorted(reports, key=lambda r: r.student):
        writer.writerow([r.student, r.assignment, f"{r.score:g}", f"{r.max_score:g}", r.status])
    write_atomic(path, text.getvalue())


def write_results(path: Path, report: Report) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(report.to_json(), indent=2))
