"""Assignment 01_collectives: ring collectives, a sharded layernorm, per-device random keys.

What a student may see: the tasks, their visible cases, points and rules. The references, the
hidden cases and the traffic bounds (closed forms) stay with the instructor, in
``solutions/collectives.py``.
"""

from __future__ import annotations

from typing import Any

from ..core.tasks import FEATURES, REPLICATED, STACKED, Assignment, Bound, Bounds, Case, Input, Scale, Task

RINGS = frozenset({"ppermute"})
# The rings move values, and sum small integers, which bfloat16 holds exactly in any order of
# addition: the reference's error against float32 is 0, and so is a sum in another order
# (tests/trusted/test_tolerances.py).
EXACT = {"float32": (0.0, 0.0), "bfloat16": (0.0, 0.0), "int32": (0.0, 0.0)}
# The layernorm's statistics are summed in float32 and its output rounded once: the reference's
# error against float32 uses 13% of its bfloat16 tolerance (4x would need half of it).
LAYERNORM_TOLERANCE = {"float32": (1e-5, 1e-5), "bfloat16": (2e-2, 2e-2)}


def _ring_cases(shape_8: tuple[int, ...], shape_y: tuple[int, ...]) -> tuple[Case, ...]:
    return (
        Case("8:i", "i", (shape_8,), "float32"),
        Case("2x4:x,y", "y", (shape_y,), "int32"),
    )


# What a ring part teaches is its collectives and its traffic: calling the built-in collective it
# replaces, or sending past its neighbours, keeps the values alone, half the points (and
# communication is judged only once the technique holds).
RING_POINTS = {"values": 3.0, "hidden values": 2.0, "technique": 3.0, "communication": 2.0}


def _ring_bounds(why: str) -> dict[str, Bounds]:
    """What these parts achieve is their traffic: up to 3x the reference's is still a ring that
    sends something twice (it loses communication, which allows no more than the reference's);
    past it, it sends whole arrays where a ring sends blocks, another algorithm. Their memory is
    their inputs and outputs, the same for every algorithm at these sizes, so it is not bounded."""
    return {"technique": Bounds(traffic=Bound(3.0, why)), "communication": Bounds(traffic=Bound(1.0, why))}


# At scale: a 32k-token sequence of 4096-wide bfloat16 activations over 8 devices, 4096 tokens a
# device (a long-context transformer's sequence-parallel block); a ring's cost is its bytes.
TOKENS, WIDTH = 32768, 4096


def _at_scale(shape: tuple[int, ...], why: str) -> Scale:
    return Scale(Case("8:i", "i", (shape,), "bfloat16"), why)


def _spec(*entries: Any) -> dict[str, list[Any]]:
    """A PartitionSpec argument, as plain data the sandbox turns back into ``jax.P``."""
    return {"P": [list(e) if isinstance(e, tuple) else e for e in entries]}


LOCAL_SHAPE_CASES = tuple(
    Case(args=args)
    for args in (
        ([16, 4], _spec("i", None), {"i": 8}),
        ([8, 6], _spec(None, "y"), {"x": 2, "y": 3}),
        ([8, 6, 5], _spec(("x", "y"), None, None), {"x": 2, "y": 4}),
        ([12, 6], _spec("y", "x"), {"x": 2, "y": 4}),
        ([10, 3], _spec("x"), {"x": 4}),  # 10 rows over 4 devices: ValueError
    )
)

ASSIGNMENT = Assignment(
    name="01_collectives",
    notebook="01_collectives.ipynb",
    solutions="collectives",
    tasks=(
        Task(
            name="local_shape",
            grade_id="test_local_shape",
            kind="python",
            points={"values": 2.0, "hidden values": 3.0},  # visible answers are in the student's hands
            cases=LOCAL_SHAPE_CASES,
            hidden_vary="other shapes, partition specs and mesh shapes, one that does not divide among them",
        ),
        Task(
            name="ring_all_gather",
            grade_id="test_ring_all_gather",
            kind="shard_map",
            points=RING_POINTS,
            bounds=_ring_bounds("a ring all-gather passes one block to its neighbour at each of its N - 1 steps"),
            cases=_ring_cases((2, 3), (3, 4)),
            at_scale=_at_scale((TOKENS // 8, WIDTH), "each device's 4096 tokens of a 32k sequence, gathered whole"),
            inputs=(Input(STACKED),),
            tolerance=EXACT,
            allowed=RINGS,
            neighbours_only=True,
        ),
        Task(
            name="ring_reduce_scatter",
            grade_id="test_ring_reduce_scatter",
            kind="shard_map",
            points=RING_POINTS,
            bounds=_ring_bounds(
                "a ring reduce-scatter passes one block's partial sum to its neighbour at each of its N - 1 steps"
            ),
            cases=_ring_cases((16, 3), (8, 2)),
            at_scale=_at_scale(
                (TOKENS, WIDTH), "a 32k sequence's partial sums on each device, each keeping its 4096 tokens"
            ),
            inputs=(Input(STACKED, "small_int"),),
            tolerance=EXACT,
            allowed=RINGS,
            neighbours_only=True,
        ),
        Task(
            name="ring_all_reduce",
            grade_id="test_ring_all_reduce",
            kind="shard_map",
            points=RING_POINTS,
            bounds=_ring_bounds(
                "a ring all-reduce is a ring reduce-scatter then a ring all-gather: 2 (N - 1) sends of a block"
            ),
            cases=_ring_cases((8, 5), (4, 3)),
            at_scale=_at_scale(
                (WIDTH, WIDTH), "the gradient of one 4096 x 4096 weight, summed over 8 data-parallel devices"
            ),
            inputs=(Input(STACKED, "small_int"),),
            tolerance=EXACT,
            allowed=RINGS,
            neighbours_only=True,
        ),
        Task(
            name="sharded_layernorm",
            grade_id="test_sharded_layernorm",
            kind="shard_map",
            points=RING_POINTS,
            bounds=_ring_bounds("a sharded layernorm all-reduces two statistics per row, never the rows themselves"),
            cases=(
                Case("8:i", "i", ((4, 8),), "float32"),
                Case("2x4:x,y", "y", ((3, 5),), "float32"),
            ),
            at_scale=_at_scale((TOKENS, WIDTH // 8), "a 32k sequence whose 4096 features are split over 8 devices"),
            inputs=(Input(FEATURES),),
            tolerance=LAYERNORM_TOLERANCE,
            allowed=frozenset({"psum"}),
        ),
        Task(
            name="fold_rng_over_axis",
            grade_id="test_fold_rng_over_axis",
            kind="shard_map",
            points={"values": 2.0, "hidden values": 2.0, "technique": 1.0},
            cases=(Case("8:i", "i", ((),), "key"), Case("2x4:x,y", "y", ((),), "key")),
            inputs=(Input(REPLICATED, "key"),),
            allowed=frozenset(),
        ),
    ),
)
