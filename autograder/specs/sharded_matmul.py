"""Assignment 02_sharded_matmul: multiplying sharded matrices, choosing the collective, and
overlapping communication with compute in a ring.

Two parts give only the layouts (``CHOICES``): the student picks the plan, and the grader holds
the traffic to the cheapest plan's for each case's sizes, so the right choice changes with them.
What each plan sends is the answer to the first part (``comm_bytes``), so those closed forms live
with the instructor, in ``solutions/sharded_matmul.py`` (its ``TARGETS``).
"""

from __future__ import annotations

from ..core.tasks import REPLICATED, Assignment, Case, Input, Layout, Task
from .given.sharded_matmul import COLS, ROWS, VISIBLE, matmul_cases

FLOAT32 = (1e-5, 1e-5)
BFLOAT16 = (2e-2, 1e-1)  # 8 significant bits: a ring rounds its partial sums once per step
TOLERANCE = {"float32": FLOAT32, "bfloat16": BFLOAT16}
# Calling the built-in collective a part forbids keeps its values alone, half the points (and
# communication is judged only once the collectives are right).
PLAIN_POINTS = {"values": 2.0, "hidden values": 1.0, "collectives": 2.0, "communication": 1.0}
RING_POINTS = {"values": 3.0, "hidden values": 2.0, "collectives": 3.0, "communication": 2.0}
CHOICE_POINTS = {
    "values": 1.0,
    "hidden values": 1.0,
    "collectives": 1.0,
    "communication": 3.0,
}  # the choice is the point


def _matmul_task(name: str, a: Layout, b: Layout, c: Layout, collective: str, ring: bool = False) -> Task:
    """A graded matmul: its layouts and the one collective it must use; a ``ring`` must also
    send each step to a neighbour, with a partial matmul per step that waits only for the blocks
    that have arrived. Its traffic is held to the plan's closed form (the instructor's)."""
    return Task(
        name=name,
        grade_id=f"test_{name}",
        kind="shard_map",
        points=RING_POINTS if ring else PLAIN_POINTS,
        cases=matmul_cases(a, b, VISIBLE),
        inputs=(Input(a), Input(b)),
        out_layout=c,
        tolerance=TOLERANCE,
        allowed=frozenset({collective}),
        required=frozenset({collective}),
        neighbours_only=ring,
        overlapped=ring,
    )


def _choice_task(name: str, a: Layout, b: Layout) -> Task:
    """A part that names only the layouts: any of its plans' collectives may be used, and the
    traffic must be the cheapest plan's for the case's sizes."""
    return Task(
        name=name,
        grade_id=f"test_{name}",
        kind="shard_map",
        points=CHOICE_POINTS,
        cases=matmul_cases(a, b, VISIBLE),
        inputs=(Input(a), Input(b)),
        out_layout=REPLICATED,
        tolerance=TOLERANCE,
        allowed=frozenset({"all_gather", "psum"}),
    )


PLANS = ("matmul_allgather", "matmul_allreduce", "matmul_gather_both", "matmul_reduce_scatter", "matmul_reshard",
         "collective_matmul_allgather", "collective_matmul_reduce_scatter")  # fmt: skip
COMM_BYTES_CASES = tuple(Case(args=(strategy, 32, 16, 8, 8, 4)) for strategy in PLANS) + (
    Case(args=("matmul_reshard", 16, 8, 12, 4, 2)),
)

ASSIGNMENT = Assignment(
    name="02_sharded_matmul",
    notebook="02_sharded_matmul.ipynb",
    solutions="sharded_matmul",
    tasks=(
        Task(
            name="comm_bytes",
            grade_id="test_comm_bytes",
            kind="python",
            points={"values": 3.0, "hidden values": 3.0},  # visible answers are in the student's hands
            cases=COMM_BYTES_CASES,
        ),
        _choice_task("matmul_case2", COLS, REPLICATED),
        _choice_task("matmul_case3", COLS, ROWS),
        _matmul_task("matmul_reduce_scatter", COLS, ROWS, ROWS, "psum_scatter"),
        _matmul_task("matmul_reshard", ROWS, COLS, ROWS, "all_gather"),
        _matmul_task("collective_matmul_allgather", ROWS, COLS, COLS, "ppermute", True),
        _matmul_task("collective_matmul_reduce_scatter", COLS, ROWS, ROWS, "ppermute", True),
    ),
)
