"""A class's rules per assignment, from the course config ``jaxcourse.toml``: how many
submissions and how large, the due date, what happens to late work, and what instant feedback
shows. ``[class]`` sets them for every assignment, ``[assignments.<name>.class]`` for one.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from autograder.core import config
from autograder.core.errors import JaxcourseError

LATE = ("accept", "refuse")  # graded as usual (nbgrader marks it late), or not taken
FEEDBACK = ("visible", "all", "none")  # visible tests only; with hidden tests' verdicts; nothing until released
_SIZE = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


class PolicyError(JaxcourseError):
    """A class rule in jaxcourse.toml that cannot be used: the message names the key."""


@dataclass(frozen=True)
class Policy:
    max_submissions: int = 20  # per student and assignment
    max_submission_size: str = "20m"  # one submission's files together
    due: str | None = None  # ISO 8601 with a time zone, e.g. "2026-12-01T23:59:00+00:00"
    late: str = "accept"
    feedback: str = "all"

    @property
    def max_bytes(self) -> int:
        return int(float(self.max_submission_size[:-1]) * _SIZE[self.max_submission_size[-1].lower()])

    def due_at(self) -> datetime.datetime | None:
        return datetime.datetime.fromisoformat(self.due) if self.due else None


def _aware(value: object) -> bool:
    """An ISO 8601 time with its zone."""
    try:
        return isinstance(value, str) and datetime.datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


RULES = {
    "max_submissions": config.whole(1),
    "max_submission_size": config.size("20m"),
    "due": config.Rule(_aware, 'an ISO 8601 time with its zone, such as "2026-12-01T23:59:00+00:00"'),
    "late": config.one_of(*LATE),
    "feedback": config.one_of(*FEEDBACK),
}


def load(root: Path, assignment: str) -> Policy:
    return config.load(Policy(), RULES, root, "class", assignment, PolicyError)
