"""The one writer of a grade. Every way of grading (``jaxcourse grade`` here or on a queue, a
class's grading service on Submit, formgrader's Autograde in an instructor's server) records a
report through ``Recorder.record``, which owns every file a grade is written to and both rules:

* **the latest submission wins**: a report of an older submission than the one already recorded
  for that student (``submission.txt``, its time) never replaces it;
* **feedback as the class allows**: the page a student reads now holds every test, the visible
  ones, or (``none``, until ``jaxcourse release-feedback``) nothing but why a notebook could not
  be read;
* **her place on the leaderboard** (``leaderboard.py``), where the class has one: a correct
  submission's page says where it ranks among the correct submissions kept so far. A class
  graded at once (``jaxcourse grade``) is ranked when all of it is (``rank_all``), so its pages
  do not depend on the order it was graded in.

``results.json`` is the truth: the feedback pages, the gradebook's row and ``grades.csv`` are made
from it (docs/grading.md). Where the student reads her feedback is the caller's: a class passes
the exchange's delivery; ``jaxcourse grade`` delivers nothing until feedback is released. Nothing
else writes these files, a refusal's page or the class's journal
(``tests/grading/test_one_writer.py``); ``recorder_for`` builds the recorder of each way of grading.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ...core.course import Course
from ...core.files import write_atomic
from ...core.records import Standing, TestResult
from ..reports import feedback
from ..reports.class_report import NoResults, read_report, read_reports
from ..reports.leaderboard import BoardRules, leaderboard
from ..reports.leaderboard import load as board_rules
from ..submission.report import Report
from . import gradebook

FEEDBACK_RULES = ("all", "visible", "none")
SUBMISSION = "submission.txt"  # beside results.json: the time of the submission it grades
GRADES_CSV = "grades.csv"  # in the results folder: one row per student, for a spreadsheet or an LMS
JOURNAL = "recorded.jsonl"  # under graded/: what a class's grading on submit recorded, once per submission
# ``jaxcourse grade`` ranks the class once it is all graded; on submit and in formgrader, each
# submission is ranked as it is recorded.
Way = Literal["class run", "on submit", "formgrader"]

# Where the student reads her feedback now (a class's exchange), given what she may read.
Deliver = Callable[[Report], None]


@dataclass(frozen=True)
class Recorder:
    """The grades of one assignment of one class."""

    nbgrader_root: Path  # the course's (or the class's) root: its gradebook.db
    out: Path  # the assignment's results folder: one folder per student
    notebook: str  # the notebook's name in the gradebook (the assignment's notebook, no suffix)
    rule: str = "all"  # the feedback a student may read now: one of FEEDBACK_RULES
    board: BoardRules | None = None  # rank each correct submission as it is recorded; None: not then

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
            if self.board is not None:
                report = replace(report, standing=self._standing(self.board, report))
            feedback.write(folder, report)
            gradebook.keep(self.nbgrader_root, self.notebook, folder, report, timestamp)
            if timestamp is not None:
                write_atomic(folder / SUBMISSION, timestamp + "\n")
        page = shown(report, self.rule)
        if deliver is not None and page is not None:
            deliver(page)
        return latest

    def refuse(self, report: Report, deliver: Deliver) -> None:
        """A submission no grader can read (an assignment the course does not know): its student
        reads why, and nothing is kept: no results folder or gradebook has a place for it."""
        page = shown(report, self.rule)
        if page is not None:
            deliver(page)

    def journal(self, outcome: dict[str, Any]) -> None:
        """One line of the class's journal: what was recorded on submit (refusals too), in order."""
        path = self.nbgrader_root / "graded" / JOURNAL
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as journal:
            journal.write(json.dumps(outcome, sort_keys=True) + "\n")

    def finish(self, assignment: str, reports: list[Report], rules: BoardRules) -> None:
        """A class graded at once: each kept correct submission ranked among all of them, then
        ``grades.csv`` of every report."""
        self.rank_all(assignment, rules)
        gradebook.write_csv(self.out / GRADES_CSV, reports)

    def rank_all(self, assignment: str, rules: BoardRules) -> None:
        """Every kept correct submission's feedback pages, with its place among all of them."""
        kept = self._kept(assignment)
        board = leaderboard(assignment, kept, rules, str)
        for report in kept:
            place = board.standing(report.student) if board is not None else None
            if place is not None:
                feedback.write(self.out / report.student, replace(report, standing=place))

    def _standing(self, rules: BoardRules, report: Report) -> Standing | None:
        """``report``'s place among the kept reports, itself in its student's place."""
        kept = [r for r in RANKED.read(self.out, report.assignment) if r.student != report.student] + [report]
        board = leaderboard(report.assignment, kept, rules, str)
        return board.standing(report.student) if board is not None else None

    def _kept(self, assignment: str) -> list[Report]:
        try:
            return read_reports(self.out, assignment).reports
        except NoResults:
            return []

    def is_latest(self, student: str, timestamp: str | None) -> bool:
        """Whether no later submission of ``student``'s has been kept (one without a time, a
        notebook graded where it lies, is the latest by definition)."""
        stamp = self.out / student / SUBMISSION
        return timestamp is None or not stamp.is_file() or stamp.read_text().strip() <= timestamp


def recorder_for(
    course: Course, assignment: str, notebook: str, way: Way, rule: str = "all", out: Path | None = None
) -> Recorder:
    """The recorder of ``assignment`` for one way of grading, from the course's configuration:
    its results folder (``out``, else ``results_dir``), its gradebook, the feedback ``rule`` the
    class set (``jaxcourse grade`` delivers none, so shows all), and its leaderboard's rules where
    a submission is ranked as it is recorded."""
    board = None if way == "class run" else board_rules(course.root, assignment)
    return Recorder(course.nbgrader_root, results_dir(course, assignment, out), notebook, rule, board)


def results_dir(course: Course, assignment: str, out: Path | None = None) -> Path:
    """Where a class's results of ``assignment`` go (``out``, else the course's graded/ folder):
    ``jaxcourse grade`` writes them there, ``jaxcourse report`` reads them."""
    return out or course.nbgrader_root / "graded" / assignment


def shown(report: Report, rule: str) -> Report | None:
    """What the student may read now: every test, the visible ones, or (``none``) nothing until
    feedback is released, but for why a notebook could not be read at all, which tells nothing
    of the tests."""
    if rule == "all":
        return report
    if rule == "visible":
        return replace(report, tests=[t for t in report.tests if t.visibility == "visible"])
    return replace(report, tests=[]) if report.status == "invalid" else None


class _Ranked:
    """What ranking needs of each kept report (who, its status, its tests' statuses, its programs
    at scale), read once per version of its results.json: a class ranks each submission as it is
    recorded, and parsing every student's whole results (pictures and all) on each submit would
    grow with the class. One per process; a file written since is read again."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[tuple[int, int, int], Report | None]] = {}
        self._lock = threading.Lock()

    def read(self, out: Path, assignment: str) -> list[Report]:
        reports = []
        for path in sorted(out.glob("*/results.json")):
            try:
                stat = path.stat()
            except OSError:
                continue  # removed while listed
            version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            with self._lock:
                seen = self._seen.get(path)
            if seen is None or seen[0] != version:
                seen = (version, _slim(path))
                with self._lock:
                    self._seen[path] = seen
            if seen[1] is not None and seen[1].assignment == assignment:
                reports.append(seen[1])
        return reports


def _slim(path: Path) -> Report | None:
    """A report without its messages, pictures and signature tables; None where it cannot be read
    (the class report says which)."""
    report = read_report(path)
    if report is None:
        return None
    tests = [TestResult(t.name, t.grade_id, t.score, t.max_score, t.status, "", t.visibility) for t in report.tests]
    return replace(report, tests=tests)


RANKED = _Ranked()
