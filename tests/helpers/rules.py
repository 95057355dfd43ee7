"""The rules the suite holds an assignment's parts to, each a function that returns what is wrong
and what to do about it ('' when the rule holds). The suite's tests assert them, and
``tests/delivery/test_adding_a_part.py`` breaks each on purpose to show that its message names the
fix: a rule that lives only in test code must at least say itself when it fails."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from autograder.core.tasks import Assignment

GUIDE = "docs/instructor.md#adding-a-part-to-an-assignment"
TOTAL = 50.0  # every assignment's points (tests/specs/test_solutions_sync.py and test_training_sync.py)


def points_total(spec: Assignment) -> str:
    """Every assignment totals 50 points."""
    if spec.max_score == TOTAL:
        return ""
    return (
        f"{spec.name} totals {spec.max_score:g} points; every assignment totals {TOTAL:g}: take a new part's "
        f"points from its other parts (their points in autograder/specs/, and their grade cells' points) ({GUIDE})"
    )


def oracle_problems(spec: Assignment, oracles: Mapping[str, object] | None) -> list[str]:
    """Every task has an independent stand-in in ``tests/oracles/<solutions>.py``'s ``ORACLES``,
    and no stand-in names a task the spec lacks."""
    where = f"tests/oracles/{spec.solutions}.py"
    if oracles is None:
        return [f"{spec.name} has no {where}: every task needs a stand-in there, in ORACLES ({GUIDE})"]
    tasks = [t.name for t in spec.tasks]
    missing, stray = [t for t in tasks if t not in oracles], sorted(set(oracles) - set(tasks))
    problems = []
    if missing:
        problems.append(
            f"{where}'s ORACLES has no stand-in for {', '.join(missing)}: every task needs one, written "
            f"another way than the reference in solutions/{spec.solutions}.py (on JAX's own collectives, say) ({GUIDE})"
        )
    if stray:
        problems.append(f"{where}'s ORACLES names {', '.join(stray)}, no task of {spec.name}: rename or remove them")
    return problems


def grade_cells(cells: Iterable[Mapping[str, Any]]) -> int:
    """How many of a notebook's cells nbgrader grades."""
    return sum(1 for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade"))


def unsolved_failures(assignment: str, grades: int, validated: str) -> str:
    """``nbgrader validate`` fails on every grade cell of a release nobody has worked on: a grade
    cell that passes unsolved would give its points for nothing. ``validated`` is what it printed."""
    if f"VALIDATION FAILED ON {grades} CELL(S)" in validated and "Success!" not in validated:
        return ""
    found = re.search(r"VALIDATION FAILED ON (\d+) CELL", validated)
    failed = found.group(1) if found else "none"
    return (
        f"nbgrader validate failed on {failed} of the {grades} grade cells of {assignment}'s unsolved release: "
        f"each must fail there, its check() calling a function whose solution cell raises NotImplementedError "
        f"unsolved ({GUIDE})\n{validated}"
    )


def unordered_at_scale(scaled: set[tuple[str, str]], paired: set[tuple[str, str]]) -> str:
    """Every part projected at scale has a worse program with the same values that projects slower,
    and every such pair is a part projected at scale."""
    alone, stray = sorted(scaled - paired), sorted(paired - scaled)
    problems = []
    if alone:
        problems.append(
            f"{', '.join('/'.join(p) for p in alone)} projected at scale with no worse program to order: add "
            f"(assignment, task, wrong submission) to WORSE in tests/trusted/test_projection.py, a program with "
            f"the same values that spends more ({GUIDE})"
        )
    if stray:
        problems.append(f"WORSE pairs {', '.join('/'.join(p) for p in stray)}, which have no at_scale: remove them")
    return "\n".join(problems)
