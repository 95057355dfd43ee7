"""The class at a glance (``jaxcourse report``), from the results a class's grading wrote
(``<out>/<student>/results.json``); nothing is graded again.

Per part: how many passed and how well the part separates strong students from weak ones (the
corrected item-total correlation: the part's score against the rest of the assignment's); the
reasons parts lost their points, counted by kind (``reasons.py``) with one anonymised example
each; the notebooks that could not be graded, by status; and what to look at first, the reason
most students share.
"""

from __future__ import annotations

import json
import math
import secrets
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import JaxcourseError
from ..submission.report import Report
from .leaderboard import DEFAULT_RULES, BoardRules, Leaderboard, leaderboard, pseudonym
from .reasons import anonymised, kind_of


class NoResults(JaxcourseError):
    """Nothing graded where the report looks."""


@dataclass(frozen=True)
class PartStats:
    """One graded part over the students whose notebooks were graded."""

    name: str  # "ring_all_gather: technique"
    max_score: float
    passed: int
    graded: int
    mean_score: float
    discrimination: float | None  # None where every student scored the same, or too few were graded

    @property
    def share_passed(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class Reason:
    """A kind of reason for lost points on one part (or a notebook that could not be graded, part
    ""), how many students it cost, and one of their messages with the student's name removed."""

    part: str
    kind: str
    students: int
    example: str


@dataclass(frozen=True)
class ClassReport:
    assignment: str
    students: int
    max_score: float
    scores: list[float]  # the graded students' totals, in the students' order
    statuses: dict[str, int]  # "graded", "error", "timeout", "crashed", "invalid" -> students
    parts: list[PartStats]
    reasons: list[Reason]  # most students first
    not_graded: list[Reason]  # notebooks that could not be graded, by status
    unreadable: list[str] = field(default_factory=list)  # students whose results.json could not be read
    leaderboard: Leaderboard | None = None  # None where no function of the assignment is projected at scale

    @property
    def first_look(self) -> Reason | None:
        """The reason most students share: where the text may be unclear."""
        return self.reasons[0] if self.reasons else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["parts"] = [{**asdict(p), "share_passed": p.share_passed} for p in self.parts]
        data["first_look"] = asdict(self.first_look) if self.first_look else None
        return data


@dataclass(frozen=True)
class ClassResults:
    """What grading wrote under a class's results folder: every readable report, in the
    students' order, and the students whose results.json could not be read (named in the report,
    never silently left out)."""

    reports: list[Report]
    unreadable: list[str]


def read_reports(out: Path, assignment: str) -> ClassResults:
    reports, unreadable = [], []
    for path in sorted(out.glob("*/results.json")):
        report = read_report(path)
        if report is None:
            unreadable.append(path.parent.name)
            continue
        if report.assignment == assignment:
            reports.append(report)
    if not reports:
        raise NoResults(f"no graded results of {assignment} under {out}: run jaxcourse grade {assignment} first")
    return ClassResults(reports, unreadable)


def read_report(path: Path) -> Report | None:
    """One student's results.json; None where it cannot be read."""
    try:
        return Report.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def summarise(
    assignment: str, results: ClassResults, rules: BoardRules = DEFAULT_RULES, secret: str | None = None
) -> ClassReport:
    """The class at a glance; its leaderboard by ``rules``, pseudonyms keyed by ``secret`` (the
    course's: the same in every report), or by a fresh one where the course's is not at hand."""
    reports = results.reports
    graded = [r for r in reports if r.status == "graded"]
    statuses: dict[str, int] = defaultdict(int)
    for report in reports:
        statuses[report.status] += 1
    return ClassReport(
        assignment=assignment,
        students=len(reports),
        max_score=max((r.max_score for r in graded), default=0.0),
        scores=[r.score for r in graded],
        statuses=dict(statuses),
        parts=_parts(graded),
        reasons=_reasons(graded),
        not_graded=_not_graded([r for r in reports if r.status != "graded"]),
        unreadable=results.unreadable,
        leaderboard=leaderboard(assignment, graded, rules, _shown(rules, secret)),
    )


def _shown(rules: BoardRules, secret: str | None) -> Callable[[str], str]:
    """What the board calls a student: her name where the instructor asked for names."""
    if rules.names:
        return str
    key = secret or secrets.token_hex(16)
    return lambda student: pseudonym(student, key)


def _parts(graded: list[Report]) -> list[PartStats]:
    names = list(dict.fromkeys(t.name for r in graded for t in r.tests))
    totals = [r.score for r in graded]
    parts = []
    for name in names:
        scores = [next((t.score for t in r.tests if t.name == name), 0.0) for r in graded]
        maximum = max((t.max_score for r in graded for t in r.tests if t.name == name), default=0.0)
        passed = sum(1 for s in scores if math.isclose(s, maximum) and maximum > 0)
        rest = [total - score for total, score in zip(totals, scores)]
        parts.append(PartStats(name, maximum, passed, len(graded), _mean(scores), _correlation(scores, rest)))
    return parts


def _reasons(graded: list[Report]) -> list[Reason]:
    """Lost points by (part, kind), each student counted once per part; the example is the first
    student's (in the students' order), anonymised."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for report in graded:
        for test in report.tests:
            kind = kind_of(test.message) if test.score < test.max_score else None
            if kind is not None:
                found[test.name, kind].append((report.student, test.message))
    reasons = [Reason(part, kind, len(who), anonymised(who[0][1], who[0][0])) for (part, kind), who in found.items()]
    return sorted(reasons, key=lambda r: (-r.students, r.part, r.kind))


def _not_graded(reports: list[Report]) -> list[Reason]:
    by_status: dict[str, list[Report]] = defaultdict(list)
    for report in reports:
        by_status[report.status].append(report)
    reasons = [
        Reason("", status, len(rs), anonymised(rs[0].message, rs[0].student)) for status, rs in by_status.items()
    ]
    return sorted(reasons, key=lambda r: (-r.students, r.kind))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's correlation; None with fewer than 3 students or no spread in either."""
    if len(xs) < 3:
        return None
    mx, my = _mean(xs), _mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return sxy / math.sqrt(sxx * syy)
