"""A class's leaderboard: its correct submissions ranked by how fast their programs would run at a
realistic size on a machine the instructor picks (``[leaderboard]`` in ``jaxcourse.toml``), from
the projections grading already made (``Report.at_scale``); nothing is compiled again.

A submission is ranked once every part of it passed, hidden cases too: a fast program that is
wrong is not fast. Its time is the sum of its functions' projected times, each a model's
(``core/roofline.py``), with its signature beside it. Entries are pseudonymous unless the
instructor asks for names: a pseudonym is a keyed hash of the student's name (the course's
secret), the same in every report of the class and unguessable from a name. Ties share a rank.

The program at scale is exported for its size and never run, so a function that reads its
shapes could do less there than on the cases that graded it. A submission whose program at scale
does less than half the reference's work in FLOPs, memory traffic or bytes sent is left out as
doubtful: no honest program of these parts does that (the references are near the least each
part can do: the communication parts allow nothing above them), and one that skips less than
half its work gains less than twice its speed.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ...core import config
from ...core.errors import JaxcourseError
from ...core.machines import MACHINES
from ...core.records import CostRecord, ScaledProgram, Standing
from ..submission.report import Report
from .scale_view import projections


class LeaderboardError(JaxcourseError):
    """``[leaderboard]`` in jaxcourse.toml holds a setting that cannot be one."""


@dataclass(frozen=True)
class BoardRules:
    """What the instructor chose: the machine submissions are ranked on, and whether the board
    shows names (``names = true``) instead of pseudonyms."""

    machine: str = "8 x H100 SXM"
    names: bool = False


DEFAULT_RULES = BoardRules()
LEAST_WORK = 0.5  # of the reference's FLOPs, memory traffic and bytes sent, at scale
RULES = {
    "machine": config.one_of(*MACHINES),
    "names": config.Rule(lambda v: isinstance(v, bool), "true or false"),
}


def load(root: Path, assignment: str) -> BoardRules:
    """The defaults, then ``[leaderboard]``, then ``[assignments.<assignment>.leaderboard]``."""
    return config.load(DEFAULT_RULES, RULES, root, "leaderboard", assignment, LeaderboardError, key="setting")


@dataclass(frozen=True)
class Entry:
    rank: int
    shown: str  # the pseudonym, or the name: the board holds nothing else of who it is
    seconds: float  # the functions' projected times, summed
    functions: dict[str, float]  # each function's projected time
    signature: dict[str, CostRecord]  # each function's program at scale, per device


@dataclass(frozen=True)
class Leaderboard:
    assignment: str
    machine: str
    functions: list[str]  # the functions projected at scale, whose times are summed
    reference: float | None  # the reference's summed projected time; None where nothing compiled at scale
    entries: list[Entry]  # fastest first
    unranked: int  # graded submissions left out: a part lost, or a function not compiled at scale
    doubtful: int = 0  # correct ones left out: a program at scale did less than LEAST_WORK of the reference's

    def standing(self, shown: str) -> Standing | None:
        """The place of the entry shown as ``shown``, as its student's feedback says it."""
        entry = next((e for e in self.entries if e.shown == shown), None)
        if entry is None:
            return None
        return Standing(
            entry.rank, len(self.entries), self.machine, entry.seconds, self.entries[0].seconds, self.reference
        )


def pseudonym(student: str, secret: str) -> str:
    """A name that stays the student's in every report of the class, and that no one without
    the course's secret can tie to her."""
    digest = hmac.new(secret.encode(), f"leaderboard:{student}".encode(), hashlib.sha256).digest()
    return f"{ADJECTIVES[digest[0] % len(ADJECTIVES)]} {ANIMALS[digest[1] % len(ANIMALS)]} {digest[2:4].hex()}"


def leaderboard(
    assignment: str, reports: Iterable[Report], rules: BoardRules, shown: Callable[[str], str]
) -> Leaderboard | None:
    """The board of ``reports``, or None where the assignment has no function projected at
    scale. ``shown``: what a student is called on it."""
    graded = [r for r in reports if r.status == "graded"]
    functions = sorted({name for r in graded for name in r.at_scale})
    if not functions:
        return None
    complete = [r for r in graded if _correct(r) and set(r.at_scale) == set(functions)]
    ranked = [r for r in complete if not any(map(shortfalls, r.at_scale.values()))]
    timed = sorted(((_seconds(r, rules.machine), r) for r in ranked), key=lambda t: (t[0][0], shown(t[1].student)))
    entries: list[Entry] = []
    rank = 0
    for i, ((total, each), report) in enumerate(timed):
        if i == 0 or not math.isclose(total, entries[-1].seconds, rel_tol=1e-9):
            rank = i + 1  # ties share a rank: 1, 2, 2, 4
        signature = {name: report.at_scale[name]["cost"] for name in functions}
        entries.append(Entry(rank, shown(report.student), total, each, signature))
    reference = _reference(graded, functions, rules.machine)
    unranked, doubtful = len(graded) - len(complete), len(complete) - len(ranked)
    return Leaderboard(assignment, rules.machine, functions, reference, entries, unranked, doubtful)


def _correct(report: Report) -> bool:
    return bool(report.tests) and all(t.status == "passed" for t in report.tests)


def shortfalls(scaled: ScaledProgram) -> list[str]:
    """What a program at scale spends less than ``LEAST_WORK`` of the reference's of, where the
    reference spends any: "FLOPs", "memory traffic", "bytes sent"."""
    yours, theirs = scaled["cost"], scaled["reference"]
    spent = [
        ("FLOPs", yours["flops"], theirs["flops"]),
        ("memory traffic", yours["hbm_bytes"], theirs["hbm_bytes"]),
        ("bytes sent", sum(yours["traffic"].values()), sum(theirs["traffic"].values())),
    ]
    return [what for what, mine, reference in spent if mine < LEAST_WORK * reference]


def doubts(report: Report) -> str:
    """Why a correct submission is not ranked, in a sentence its student reads; "" where it may be."""
    if not _correct(report):
        return ""
    short = {name: shortfalls(scaled) for name, scaled in sorted(report.at_scale.items())}
    said = "; ".join(f"{name}'s {', '.join(what)}" for name, what in short.items() if what)
    if not said:
        return ""
    return (
        f"Leaderboard: not ranked: at its realistic size your program spends less than {LEAST_WORK:.0%} of the "
        f"reference's there ({said}). The grader compiles it at that size without running it, so a program "
        f"that does less there than on the cases that graded it is not ranked; do the same work at every size."
    )


def _seconds(report: Report, machine: str) -> tuple[float, dict[str, float]]:
    each = {name: projections(scaled, machine)[0].total_s for name, scaled in sorted(report.at_scale.items())}
    return sum(each.values()), each


def _reference(graded: list[Report], functions: list[str], machine: str) -> float | None:
    """The reference's summed time, from any report that projected every function: each holds
    the same reference cost at scale."""
    report = next((r for r in graded if set(r.at_scale) == set(functions)), None)
    if report is None:
        return None
    return sum(projections(report.at_scale[name], machine)[1].total_s for name in functions)


ADJECTIVES = (
    "amber", "brisk", "calm", "deft", "eager", "fleet", "gentle", "hardy", "keen", "lucid", "merry", "nimble",
    "plucky", "quiet", "rapid", "steady", "tidy", "vivid", "wise", "zesty", "bold", "crisp", "dapper", "earnest",
    "frank", "glad", "honest", "jolly", "lively", "mellow", "noble", "proud",
)  # fmt: skip
ANIMALS = (
    "otter", "heron", "lynx", "marten", "ibex", "wren", "badger", "falcon", "gecko", "hare", "koala", "lemur",
    "moose", "newt", "orca", "puffin", "quail", "raven", "seal", "tapir", "urchin", "vole", "walrus", "yak",
    "zebra", "bison", "crane", "dingo", "egret", "ferret", "gibbon", "hyena",
)  # fmt: skip
