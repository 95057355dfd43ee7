"""Self-check exercises for lecture 09_transformer_parallelism (never graded).

``attention_flops_per_token``: the forward FLOPs of attention's two products per token, every
pair of positions or, causal, only the visible ones.
``neighbour_attention``: one step of ring attention: a device's queries over its own block of
keys and values and its left neighbour's, merged by the online softmax; one ppermute to a
neighbour, traffic no more than one block of keys and one of values.
"""

from __future__ import annotations

from ..core.tasks import STACKED, Assignment, Case, Input, Task, least_traffic

BLOCKS = (Input(STACKED),) * 3  # q, k, v: each device its own block of the sequence

EXERCISES = Assignment(
    name="lecture 09_transformer_parallelism",
    notebook="09_transformer_parallelism.ipynb",
    solutions="lecture_09_transformer_parallelism",
    tasks=(
        Task(
            name="attention_flops_per_token",
            grade_id="lecture_attention_flops_per_token",
            kind="python",
            points={"values": 1.0},
            cases=tuple(
                Case(args=args)
                for args in ((32, 64, False), (32, 64, True), (1, 8, True), (4096, 4096, True), (1000, 128, False))
            ),
        ),
        Task(
            name="neighbour_attention",
            grade_id="lecture_neighbour_attention",
            kind="shard_map",
            points={"values": 1.0, "technique": 1.0, "communication": 1.0},
            bounds=least_traffic("one step of the ring sends one block of keys and one of values"),
            cases=(
                Case("8:i", "i", ((4, 8),) * 3, "float32"),
                Case("2x4:x,y", "y", ((3, 4),) * 3, "float32"),
            ),
            inputs=BLOCKS,
            out_layout=STACKED,
            tolerance={"float32": (1e-5, 1e-5)},
            allowed=frozenset({"ppermute"}),
            neighbours_only=True,
        ),
    ),
)
