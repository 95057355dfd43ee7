"""The tests one grading runs: every case of every task, as a call the sandbox is told (its
signature: no values), the seed its inputs are drawn from on the trusted side, and the closed-form
targets it is held to. A task with a realistic size adds one more, projected and never scored:
its program at that size, exported in the sandbox as any other and compiled, never run, on the
trusted side (``trusted/projection.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from ...core.records import CaseTargets, Signature
from ...core.tasks import Case, Task, case_id, case_seed
from ...harness.calls import signature

AT_SCALE = "at-scale"  # the projected test's id within its task: "<task>/at-scale"


@dataclass(frozen=True)
class PlannedTest:
    id: str
    task: Task
    case: Case
    sig: Signature
    seed: int
    targets: CaseTargets = field(default_factory=lambda: CaseTargets())
    projected: bool = False  # the task's realistic size: its cost is reported, never scored


def plan(
    assignment: str,
    tasks: tuple[Task, ...],
    salt: str,
    targets: Callable[[Task, Case], CaseTargets],
    at_scale: bool = True,
) -> list[PlannedTest]:
    """Each case of ``tasks``, its seed salted with ``salt`` (``tasks.case_seed``); with
    ``at_scale``, each task's realistic size after its cases."""
    tests = []
    for t in tasks:
        tests += [
            PlannedTest(
                case_id(t, i),
                t,
                c,
                signature(t, c, assignment, salt),
                case_seed(assignment, t.name, c, salt),
                targets(t, c),
            )
            for i, c in enumerate(t.cases)
        ]
        if at_scale and t.at_scale is not None:
            tests.append(projected(assignment, t))
    return tests


def projected(assignment: str, task: Task) -> PlannedTest:
    """``task``'s realistic size as a test: its signature marked so that the trusted side
    compiles it and never runs it; its seed unsalted, since no input is ever drawn."""
    assert task.at_scale is not None  # and Task refuses one on a kind other than shard_map
    case = task.at_scale.case
    sig = cast(Signature, {**signature(task, case, assignment), "at_scale": True})  # an array kind's, which has the key
    return PlannedTest(
        f"{task.name}/{AT_SCALE}", task, case, sig, case_seed(assignment, task.name, case), projected=True
    )
