"""The course's assignments, by nbgrader name."""

from __future__ import annotations

from ..tasks import Assignment
from . import collectives

ASSIGNMENTS: dict[str, Assignment] = {a.name: a for a in (collectives.ASSIGNMENT,)}


class UnknownAssignment(KeyError):
    def __str__(self) -> str:
        return f"unknown assignment {self.args[0]!r}; known: {', '.join(sorted(ASSIGNMENTS))}"


def get(name: str) -> Assignment:
    try:
        return ASSIGNMENTS[name]
    except KeyError:
        raise UnknownAssignment(name) from None
