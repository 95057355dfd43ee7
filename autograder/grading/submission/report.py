"""One student's grading outcome, as results.json stores it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.profile import Stopwatch
from ...core.records import ScaledProgram, Standing, TestResult


@dataclass
class Report:
    """``status``: graded, error, timeout, crashed or invalid; the tests carry the points."""

    student: str
    assignment: str
    status: str
    message: str
    tests: list[TestResult] = field(default_factory=list)
    fingerprint: str = ""
    # Each graded function's program shape (core/program_shape.py), from its first visible case:
    # what `jaxcourse similar` compares, never graded again.
    programs: dict[str, list[str]] = field(default_factory=dict)
    # Each function's program at its realistic size beside the reference's (trusted/projection.py):
    # what its feedback projects on real machines and a class's leaderboard ranks; never scored.
    at_scale: dict[str, ScaledProgram] = field(default_factory=dict)
    # Where this grading's time went; never stored, so results.json stays the same run to run.
    profile: Stopwatch = field(default_factory=Stopwatch, compare=False)
    # Her place on the class's leaderboard when her feedback was written (``Recorder``): shown
    # in the feedback, never stored, since it moves as the class submits.
    standing: Standing | None = field(default=None, compare=False)

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tests), 6)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.tests), 6)

    def to_json(self) -> dict[str, Any]:
        return {
            "student": self.student,
            "assignment": self.assignment,
            "status": self.status,
            "message": self.message,
            "score": self.score,
            "max_score": self.max_score,
            "fingerprint": self.fingerprint,
            "tests": [t.to_json() for t in self.tests],
            "programs": self.programs,
            "at_scale": self.at_scale,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        tests = [TestResult(**t) for t in data["tests"]]
        programs = data.get("programs", {})  # results written before programs were kept have none
        return cls(
            data["student"],
            data["assignment"],
            data["status"],
            data["message"],
            tests,
            data["fingerprint"],
            programs,
            _projectable(data.get("at_scale", {})),  # nor, before projections, programs at scale
        )


def _projectable(at_scale: dict[str, Any]) -> dict[str, Any]:
    """The programs at scale today's model can project: a record written before it read each
    collective (issue 52: one overlap share for them all) is left out, as if never compiled there,
    until the submission is graded again."""
    return {
        name: scaled
        for name, scaled in at_scale.items()
        if all("collectives" in scaled.get(side, {}) for side in ("cost", "reference"))
    }
