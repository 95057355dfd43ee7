"""A class's rules per assignment, from the course config ``jaxcourse.toml``: how many
submissions and how large, the due date, what happens to late work, and what instant feedback
shows. ``[class]`` sets them for every assignment, ``[assignments.<name>.class]`` for one.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ...core.config import layered
from ...core.errors import JaxcourseError

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


def load(root: Path, assignment: str) -> Policy:
    rules = Policy()
    for table, where in layered(root, "class", assignment):
        rules = _apply(rules, table, where)
    return rules


def _apply(rules: Policy, table: dict[str, Any], where: str) -> Policy:
    known = [f.name for f in fields(Policy)]
    for name, value in table.items():
        if name not in known:
            raise PolicyError(f"{where}: unknown key {name!r}; known: {', '.join(known)}")
        _check(name, value, where)
    return replace(rules, **table)


def _check(name: str, value: Any, where: str) -> None:
    problem = ""
    if name == "max_submissions" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        problem = "a whole number of at least 1"
    elif name == "max_submission_size" and not (
        isinstance(value, str) and value[-1:].lower() in _SIZE and value[:-1].replace(".", "", 1).isdigit()
    ):
        problem = 'a size such as "20m"'
    elif name == "late" and value not in LATE:
        problem = f"one of {', '.join(LATE)}"
    elif name == "feedback" and value not in FEEDBACK:
        problem = f"one of {', '.join(FEEDBACK)}"
    elif name == "due":
        try:
            aware = isinstance(value, str) and datetime.datetime.fromisoformat(value).tzinfo is not None
        except ValueError:
            aware = False
        problem = "" if aware else 'an ISO 8601 time with its zone, such as "2026-12-01T23:59:00+00:00"'
    if problem:
        raise PolicyError(f"{where}: {name} = {value!r} must be {problem}")
