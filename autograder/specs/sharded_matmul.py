"""Assignment 02_sharded_matmul: multiplying sharded matrices, choosing the collective, and
overlapping communication with compute in a ring.

Two parts give only the layouts (``CHOICES``): the student picks the plan, and the grader holds
the traffic to the cheapest plan's for each case's sizes, so the right choice changes with them.
What each plan sends is the answer to the first part (``comm_bytes``), so those closed forms live
with the instructor, in ``solutions/sharded_matmul.py`` (its ``TARGETS``).
"""

from __future__ import annotations

from ..core.tasks import REPLICATED, Assignment, Bound, Bounds, Case, Input, Layout, Scale, Task
from .given.sharded_matmul import COLS, ROWS, VISIBLE, matmul_cases

FLOAT32 = (1e-5, 1e-5)
# bfloat16 has 8 significant bits, and a ring rounds its partial sums once per step: 4x the
# reference's own error against float32 on its bfloat16 case needs atol 0.17 beside rtol
# 2e-2 in the ring reduce-scatter, the most of these parts (benchmarks/bf16_tolerances.py, held by
# tests/trusted/test_tolerances.py); rounded up.
BFLOAT16 = (2e-2, 2e-1)
TOLERANCE = {"float32": FLOAT32, "bfloat16": BFLOAT16}
# Calling the built-in collective a part forbids keeps its values alone, half the points (and
# communication is judged only once the collectives are right).
PLAIN_POINTS = {"values": 2.0, "hidden values": 1.0, "technique": 2.0, "communication": 1.0}
RING_POINTS = {"values": 3.0, "hidden values": 2.0, "technique": 3.0, "communication": 2.0}
CHOICE_POINTS = {
    "values": 1.0,
    "hidden values": 1.0,
    "technique": 1.0,
    "communication": 3.0,
}  # the choice is the point


# A sharded matmul's technique is its plan: which operand travels, and how much of the product
# each device computes. Another plan for the same layouts multiplies N times more on a device
# (gathering both operands) or moves another operand (B has fewer values than A everywhere, and a
# product C more than either in some cases), 1.5x or more apart on some case; two spellings of one
# plan are not. Communication then holds it to the reference's bytes, the plan's least. A ring also
# holds one block at a time: one that gathers all of A first, or computes the whole partial product
# before it sends, needs 1.75x to 7x the reference's memory at its peak on the hidden cases with a
# long k or a tall C, however its matmuls feign the overlap (honest spellings stay within 1.25x).
PLAN_FLOPS = Bound(1.5, "each device multiplies only the blocks the plan gives it")
RING_PEAK = Bound(
    1.5, "a ring holds the block in flight and the one it multiplies, never all of A or of the partial sums"
)


def _plan_bounds(plan: str, ring: bool) -> dict[str, Bounds]:
    return {
        "technique": Bounds(flops=PLAN_FLOPS, traffic=Bound(1.5, plan), peak=RING_PEAK if ring else None),
        "communication": Bounds(traffic=Bound(1.0, plan)),
    }


PLANS_SENT = {
    "psum_scatter": "the plan reduce-scatters C's partial sums: (N - 1)/N of this device's m x n",
    "all_gather": "the plan gathers B, the smaller operand: (N - 1)/N of k x n",
    "ppermute": "a ring passes one block on at each of its N - 1 steps, as much as the collective it replaces",
}


# At scale: an MLP's up-projection of a 32k-token sequence, 4096 features to 16384, in bfloat16 on
# 8 devices: big enough that the bytes a plan moves weigh against its FLOPs on every machine.
SCALE = ("8:i", "i", 32768, 4096, 16384, "bfloat16")
SCALE_WHY = "an MLP's up-projection of a 32k-token sequence (4096 -> 16384), bfloat16"


def _matmul_task(name: str, a: Layout, b: Layout, c: Layout, collective: str, ring: bool = False) -> Task:
    """A graded matmul: its layouts and the one collective it must use; a ``ring`` must also
    send each step to a neighbour, with a partial matmul per step that waits only for the blocks
    that have arrived. Its traffic is held to the reference's (the plan's closed form)."""
    return Task(
        name=name,
        grade_id=f"test_{name}",
        kind="shard_map",
        points=RING_POINTS if ring else PLAIN_POINTS,
        bounds=_plan_bounds(PLANS_SENT[collective], ring),
        cases=matmul_cases(a, b, VISIBLE),
        at_scale=Scale(matmul_cases(a, b, (SCALE,))[0], SCALE_WHY),
        inputs=(Input(a), Input(b)),
        out_layout=c,
        tolerance=TOLERANCE,
        allowed=frozenset({collective}),
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
        # The plans multiply different shares of the product, so FLOPs choose no plan; the bytes do.
        bounds={"communication": Bounds(traffic=Bound(1.0, "the cheaper plan for these sizes sends the least"))},
        cases=matmul_cases(a, b, VISIBLE),
        at_scale=Scale(matmul_cases(a, b, (SCALE,))[0], SCALE_WHY),
        inputs=(Input(a), Input(b)),
        out_layout=REPLICATED,
        tolerance=TOLERANCE,
        allowed=frozenset({"all_gather", "psum"}),
    )


PLANS = (
    "matmul_allgather",
    "matmul_allreduce",
    "matmul_gather_both",
    "matmul_reduce_scatter",
    "matmul_reshard",
    "collective_matmul_allgather",
    "collective_matmul_reduce_scatter",
)
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
