"""The tests one grading runs: every case of every task, as a call the sandbox is told (its
signature: no values), the seed its inputs are drawn from on the trusted side, and the closed-form
targets it is held to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.records import CaseTargets, Signature
from ..core.tasks import Case, Task, case_id, case_seed
from ..harness.calls import signature


@dataclass(frozen=True)
class PlannedTest:
    id: str
    task: Task
    case: Case
    sig: Signature
    seed: int
    targets: CaseTargets = field(default_factory=lambda: CaseTargets())


def plan(
    assignment: str, tasks: tuple[Task, ...], salt: str, targets: Callable[[Task, Case], CaseTargets]
) -> list[PlannedTest]:
    """Each case of ``tasks``, its seed salted with ``salt`` (``tasks.case_seed``)."""
    return [
        PlannedTest(
            case_id(t, i),
            t,
            c,
            signature(t, c, assignment, salt),
            case_seed(assignment, t.name, c, salt),
            targets(t, c),
        )
        for t in tasks
        for i, c in enumerate(t.cases)
    ]
