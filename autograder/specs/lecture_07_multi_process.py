"""Self-check exercises of course/07_multi_process.ipynb: the arithmetic of many processes.

All three are plain Python, so they run in the student's single-process kernel: which rows a
process holds, how many steps every process can run, and what one process holds of an array.
"""

from __future__ import annotations

from typing import Any

from ..core.tasks import Assignment, Case, Task


def _spec(*entries: Any) -> dict[str, list[Any]]:
    """A PartitionSpec argument, as plain data that the harness turns back into ``jax.P``."""
    return {"P": [list(e) if isinstance(e, tuple) else e for e in entries]}


PROCESS_ROWS_CASES = tuple(
    Case(args=args)
    for args in (
        (16, 0, 2),
        (16, 1, 2),
        (24, 2, 4),
        (64, 7, 8),
        (8, 0, 1),  # one process holds everything
        (10, 1, 4),  # 10 rows for 4 processes: ValueError
    )
)

SHARED_STEP_CASES = tuple(
    Case(args=args)
    for args in (
        ([96, 96], 32),
        ([100, 90, 95, 64], 16),
        ([33, 65, 47], 8),
        ([10, 50], 16),  # one process cannot fill a single batch
        ([64], 8),
    )
)

PROCESS_LOCAL_SHAPE_CASES = tuple(
    Case(args=args)
    for args in (
        ([16, 8], _spec("data", None), {"data": 8}, 2),
        ([16, 8], _spec("data", "model"), {"data": 2, "model": 4}, 2),
        ([16, 8], _spec("data", "model"), {"model": 2, "data": 4}, 2),  # every process: all rows
        ([16, 8], _spec(None, "model"), {"data": 4, "model": 2}, 2),
        ([32, 4], _spec(("data", "model"), None), {"data": 2, "model": 4}, 4),
        ([8, 8, 3], _spec("a", "c", None), {"a": 2, "b": 2, "c": 2}, 4),
        ([16, 8], _spec("data", "model"), {"data": 2, "model": 4}, 1),  # one process
        ([16, 8], _spec("data", "model"), {"data": 2, "model": 4}, 8),  # one device per process
    )
)

EXERCISES = Assignment(
    name="lecture 07_multi_process",
    notebook="07_multi_process.ipynb",
    solutions="lecture_07_multi_process",
    tasks=(
        Task(
            name="process_rows",
            grade_id="test_process_rows",
            kind="python",
            points={"values": 1.0},
            cases=PROCESS_ROWS_CASES,
        ),
        Task(
            name="shared_step_count",
            grade_id="test_shared_step_count",
            kind="python",
            points={"values": 1.0},
            cases=SHARED_STEP_CASES,
        ),
        Task(
            name="process_local_shape",
            grade_id="test_process_local_shape",
            kind="python",
            points={"values": 1.0},
            cases=PROCESS_LOCAL_SHAPE_CASES,
        ),
    ),
)
