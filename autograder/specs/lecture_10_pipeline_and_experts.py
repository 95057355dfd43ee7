"""Self-check exercises for lecture 10_pipeline_and_experts (never graded).

``pipeline_idle_share``: the share of a GPipe schedule's steps in which a stage does no real work.
``pipeline_shift``: one step down a pipeline: each stage receives its predecessor's activation,
the first stage zeros; one ppermute to a neighbour, traffic no more than one activation.
"""

from __future__ import annotations

from ..core.tasks import STACKED, Assignment, Case, Input, Task, least_traffic

EXERCISES = Assignment(
    name="lecture 10_pipeline_and_experts",
    notebook="10_pipeline_and_experts.ipynb",
    solutions="lecture_10_pipeline_and_experts",
    tasks=(
        Task(
            name="pipeline_idle_share",
            grade_id="lecture_pipeline_idle_share",
            kind="python",
            points={"values": 1.0},
            cases=tuple(Case(args=args) for args in ((4, 8), (4, 1), (1, 5), (8, 32), (3, 100))),
        ),
        Task(
            name="pipeline_shift",
            grade_id="lecture_pipeline_shift",
            kind="shard_map",
            points={"values": 1.0, "technique": 1.0, "communication": 1.0},
            bounds=least_traffic("each stage hands one activation to the next"),
            cases=(
                Case("8:i", "i", ((4, 8),), "float32"),
                Case("2x4:x,y", "y", ((3, 5),), "float32"),
            ),
            inputs=(Input(STACKED),),  # each stage its own activation
            out_layout=STACKED,
            tolerance={"float32": (0.0, 0.0)},
            allowed=frozenset({"ppermute"}),
            neighbours_only=True,
        ),
    ),
)
