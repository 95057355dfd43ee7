"""A class's assignment over time, from what the hub's exchange kept: when each submission came
in and what the grading service recorded for it, against the roster and the due date. The class
report shows it (``jaxcourse report --class``, and the instructor's page in her server): how
submissions arrived, how long each student took from a first submission to full marks, and who
has not submitted."""

from __future__ import annotations

import datetime
import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from classroom import roster
from classroom.exchange.policy import Policy
from classroom.exchange.store import STAMP, Store


@dataclass(frozen=True)
class Arrival:
    """One submission: who, when (UTC, ISO 8601), and its recorded score (None: not yet graded)."""

    student: str
    at: str
    score: float | None
    max_score: float | None


@dataclass(frozen=True)
class Timeline:
    assignment: str
    due: str | None  # ISO 8601, as the class's rules give it
    now: str
    arrivals: list[Arrival]  # oldest first
    to_full_marks: dict[str, float | None]  # student -> seconds from first submission (None: not yet)
    roster: int  # students on the roster
    not_submitted: list[str]  # the roster's students with no submission
    late: list[str]  # students whose first submission came after the due date

    @property
    def median_to_full_marks(self) -> float | None:
        reached = [s for s in self.to_full_marks.values() if s is not None]
        return statistics.median(reached) if reached else None

    @property
    def past_due(self) -> bool:
        return self.due is not None and _instant(self.now) > _instant(self.due)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "median_to_full_marks": self.median_to_full_marks, "past_due": self.past_due}


def timeline(store: Store, hub_dir: Path, rules: Policy, assignment: str, now: datetime.datetime) -> Timeline:
    """``assignment``'s submissions in ``store``, against the roster under ``hub_dir`` (its
    students) and ``rules``' due date."""
    arrivals = sorted((_arrival(store, s) for s in store.submissions(assignment=assignment)), key=lambda a: a.at)
    due, students = rules.due_at(), _students(hub_dir)
    firsts: dict[str, str] = {}
    full: dict[str, str] = {}
    for a in arrivals:
        firsts.setdefault(a.student, a.at)
        if a.score is not None and a.max_score and a.score >= a.max_score:
            full.setdefault(a.student, a.at)
    seconds = {s: (_instant(full[s]) - _instant(t)).total_seconds() if s in full else None for s, t in firsts.items()}
    return Timeline(
        assignment=assignment,
        due=rules.due,
        now=now.astimezone(datetime.UTC).isoformat(),
        arrivals=arrivals,
        to_full_marks=dict(sorted(seconds.items())),
        roster=len(students),
        not_submitted=sorted(set(students) - set(firsts)),
        late=sorted(s for s, t in firsts.items() if due is not None and _instant(t) > due),
    )


def _arrival(store: Store, submission: Any) -> Arrival:
    at = datetime.datetime.strptime(submission.stamp, STAMP).replace(tzinfo=datetime.UTC).isoformat()
    path = store.outcome_path(submission)
    outcome = json.loads(path.read_text()) if path.is_file() else {}
    return Arrival(submission.student, at, outcome.get("score"), outcome.get("max_score"))


def _students(hub_dir: Path) -> list[str]:
    """The roster's students (instructors submit nothing); none where the class has no roster."""
    path = hub_dir / "roster.json"
    if not path.is_file():
        return []
    return [name for name, entry in roster.load_hashes(path).items() if entry.get("role") == "student"]


def _instant(iso: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(iso)
