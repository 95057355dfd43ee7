"""Self-check exercises for lecture 08_fsdp_and_tensor_parallelism (never graded).

``bytes_per_device``: parameter, gradient and Adam-state bytes per device under DP, ZeRO-1,
ZeRO-2 and FSDP.
``zero_momentum_step``: SGD with momentum whose momentum is sharded over the axis: reduce-scatter
the gradients, update this device's slice, all-gather the parameters; both collectives required,
traffic no more than one all-reduce of the gradient.
``matmul_intensity``: FLOPs per byte of memory traffic of a matmul.
"""

from __future__ import annotations

from typing import Any

from ..core.tasks import REPLICATED, Assignment, Case, Input, Layout, Task, least_traffic

BY_AXIS = Layout(("AXIS",))  # a vector split over the case's axis: each device its own block
STRATEGIES = {"dp": 0, "zero1": 1, "zero2": 2, "fsdp": 3}  # how many of (state, grads, params) are sharded


def _python_task(name: str, arguments: tuple[tuple[Any, ...], ...]) -> Task:
    """A plain-Python exercise: one point for the right values on every case."""
    return Task(
        name=name,
        grade_id=f"lecture_{name}",
        kind="python",
        points={"values": 1.0},
        cases=tuple(Case(args=args) for args in arguments),
    )


EXERCISES = Assignment(
    name="lecture 08_fsdp_and_tensor_parallelism",
    notebook="08_fsdp_and_tensor_parallelism.ipynb",
    solutions="lecture_08_fsdp_and_tensor_parallelism",
    tasks=(
        _python_task(
            "bytes_per_device",
            (
                (1024, 8, "dp"),
                (1024, 8, "zero1"),
                (1024, 8, "zero2"),
                (1024, 8, "fsdp"),
                (96, 4, "zero2"),
                (96, 2, "fsdp"),
                (96, 4, "zero4"),
            ),
        ),
        Task(
            name="zero_momentum_step",
            grade_id="lecture_zero_momentum_step",
            kind="shard_map",
            points={"values": 1.0, "technique": 1.0, "communication": 1.0},
            bounds=least_traffic("a reduce-scatter and an all-gather send what one all-reduce of the gradient does"),
            cases=(
                Case("8:i", "i", ((16,), (16,), (2,)), "float32", kwargs=(("lr", 0.1), ("beta", 0.9))),
                Case("2x4:x,y", "y", ((12,), (12,), (3,)), "float32", kwargs=(("lr", 0.5), ("beta", 0.5))),
            ),
            inputs=(Input(REPLICATED), Input(BY_AXIS), Input(BY_AXIS)),
            out_layout=REPLICATED,
            tolerance={"float32": (1e-5, 1e-5)},
            allowed=frozenset({"psum_scatter", "all_gather"}),
        ),
        _python_task(
            "matmul_intensity",
            ((16, 32, 8, 4), (128, 64, 256, 2), (8, 512, 256, 2), (64, 64, 64, 4)),
        ),
    ),
)
