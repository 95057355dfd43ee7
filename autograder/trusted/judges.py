"""The trusted half of each kind of task, by kind: how its reference is computed, how what the
sandbox returned is measured against it, and how the measurements become points. The harness
(``harness/calls.py``) holds the other half; both cover ``core.kinds.KINDS``."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..core.kinds import Kind
from ..core.records import Measurement, TestResult
from ..core.tasks import Task
from . import python, shard_map, sharded_step
from .jobs import Evaluation, Measured, ReferenceJob, References
from .training import layouts, step


class KindJudge(Protocol):
    def reference_record(self, job: ReferenceJob, refs: References) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The reference's record and arrays for one case."""
        ...

    def measure(self, test: Evaluation) -> Measurement: ...

    def score(self, task: Task, measured: Measured) -> list[TestResult]: ...


JUDGES: dict[Kind, KindJudge] = {
    "shard_map": shard_map,
    "python": python,
    "training": layouts,
    "train_step": step,
    "sharded_step": sharded_step,
}


def score_task(task: Task, measured: Measured) -> list[TestResult]:
    """Score every part of ``task`` that the measured cases can decide."""
    return JUDGES[task.kind].score(task, measured)
