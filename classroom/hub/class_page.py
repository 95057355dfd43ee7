"""The class report of one assignment, with the hub's timeline where the class has one: what
``jaxcourse report`` writes and what the instructor's page (``report_page.py``) serves."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder import specs
from autograder.core.course import Course
from autograder.grading.reports import class_report_html, leaderboard
from autograder.grading.reports.class_report import ClassReport, read_reports, summarise
from autograder.grading.reports.leaderboard import DEFAULT_RULES, BoardRules
from classroom.classdir import ClassDir
from classroom.exchange import policy

from . import class_timeline, class_timeline_html
from .class_timeline import Timeline


@dataclass(frozen=True)
class ClassView:
    report: ClassReport
    timeline: Timeline | None  # only a hub's class has one

    def to_json(self) -> dict[str, Any]:
        return {**self.report.to_json(), "timeline": self.timeline.to_json() if self.timeline else None}

    def to_html(self) -> str:
        return class_report_html.to_html(
            self.report, class_timeline_html.to_html(self.timeline) if self.timeline else ""
        )


def class_view(checkout: Course | None, out: Path, assignment: str, classdir: ClassDir | None) -> ClassView:
    """The report from the results under ``out``; the timeline from ``classdir``'s exchange and
    roster and the checkout's rules (its due date), where there is a class."""
    report = summarise(assignment, read_reports(out, assignment), *_board(checkout, assignment))
    if classdir is None or checkout is None:
        return ClassView(report, None)
    rules = policy.load(checkout.root, assignment)
    now = datetime.datetime.now(datetime.UTC)
    return ClassView(report, class_timeline.timeline(classdir.store, classdir.root / "hub", rules, assignment, now))


def _board(checkout: Course | None, assignment: str) -> tuple[BoardRules, str | None]:
    """The leaderboard the course's jaxcourse.toml asks for, its pseudonyms keyed by the course's
    secret where the checkout has it (the same pseudonyms in every report of the class)."""
    if checkout is None:
        return DEFAULT_RULES, None
    secret = checkout.salt() if checkout.has_solutions(specs.get(assignment)) else None
    return leaderboard.load(checkout.root, assignment), secret
