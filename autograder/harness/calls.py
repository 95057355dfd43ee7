"""How each kind of task is called, by kind: its signature (what the sandbox is told) and what
the sandbox does with the student's function (an exported artifact, or a plain value).

The trusted side's registry (``trusted/judges.py``) holds the other half of each kind; both
cover ``core.kinds.KINDS``, and a test holds them to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..core.kinds import Kind
from ..core.records import Signature
from ..core.tasks import Case, Task
from . import layouts, python, shard_map, sharded_step, train_step


class KindCalls(Protocol):
    REPORTS_MESH: bool  # the runner reports the mesh it built, for the same-mesh check

    def signature(self, task: Task, case: Case, assignment: str = "", salt: str = "") -> Signature:
        """``salt``: the grader's secret (``tasks.case_seed``), for a kind whose run the sandbox
        is told the seed of; a student's own check has none."""
        ...

    def in_sandbox(self, fn: Callable[..., Any], sig: Any, namespace: dict[str, Any]) -> bytes | dict[str, Any]:
        """An exported artifact (bytes), or a plain value ({"value": ...} / {"raises": ...})."""
        ...


CALLS: dict[Kind, KindCalls] = {
    "shard_map": shard_map,
    "python": python,
    "training": layouts,
    "train_step": train_step,
    "sharded_step": sharded_step,
}


def signature(task: Task, case: Case, assignment: str = "", salt: str = "") -> Signature:
    """Everything needed to call ``task`` on ``case`` except the input values."""
    return CALLS[task.kind].signature(task, case, assignment, salt)
