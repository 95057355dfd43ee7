"""Assignment 06_pipeline_experts: a GPipe pipeline over the devices of an axis, the bubble of an
interleaved schedule, an expert-parallel mixture of experts with a capacity, and a pipeline that
was only ever tested on two stages.

What the students are given (the stage's layer, the layouts, the broken pipeline) lives in
``given/pipeline_experts.py``. How often the pipelines send and what they and the experts send are
the instructor's: they live in ``solutions/pipeline_experts.py``.
"""

from __future__ import annotations

import dataclasses

from ..core.tasks import Assignment, Bound, Bounds, Case, Input, Scale, Task
from .given.pipeline_experts import MOE_LAYOUTS, PIPELINE_LAYOUTS, moe_cases, pipeline_cases

# The differentiated pipelines' gradients reach tens; their small entries carry the rounding of
# those sums, which a compiler's order of summation moves by up to about 1e-4. In bfloat16, 4x the
# reference's own error against float32 on the pipelines' bfloat16 cases needs atol 0.16
# beside rtol 2e-2 (benchmarks/bf16_tolerances.py, held by tests/trusted/test_tolerances.py).
TOLERANCE = {"float32": (1e-4, 1e-3), "bfloat16": (2e-2, 2e-1)}


# A pipeline's device runs its own stage, M + S - 1 times: a program that runs the whole model on
# every device multiplies S M / (M + S - 1) times as much (2x and up on these cases), and one that
# moves weights instead of activations sends and holds far more where a stage's weights outweigh
# its micro-batches (a hidden case). Lecture 10's scan hands over once more than the least, 10%
# more bytes on the smallest case, so communication allows 25% over the reference's.
PIPELINE_SENT = "a pipeline hands each micro-batch's activation to the next stage once, and the outputs round the ring"
PIPELINE_BOUNDS = {
    "technique": Bounds(
        flops=Bound(1.5, "each device runs its own stage only, once per step"),
        peak=Bound(2.0, "each device holds its own stage's weights and the activations in flight"),
        traffic=Bound(1.5, PIPELINE_SENT),
    ),
    "communication": Bounds(traffic=Bound(1.25, PIPELINE_SENT)),
}

# Experts stay where they are and tokens travel, at most `capacity` of them to each expert: moving
# the experts' weights, or every token, sends and holds several times the reference's on the
# cases with small capacities; FLOPs grow with the tokens each expert receives.
MOE_SENT = (
    "an expert-parallel layer sends each expert at most `capacity` tokens from each device, and their outputs back"
)
MOE_BOUNDS = {
    "technique": Bounds(
        flops=Bound(1.5, "each expert works on at most `capacity` tokens from each device"),
        peak=Bound(1.5, "each device holds its own expert and the tokens routed to it, never the others' weights"),
        traffic=Bound(1.5, MOE_SENT),
    ),
    "communication": Bounds(traffic=Bound(1.0, MOE_SENT)),
}


# At a realistic size: 8 stages of a 4096-wide layer, 8 micro-batches of 1024 tokens, bfloat16,
# a bubble of 7 of 15 steps. Not 32 micro-batches: XLA:CPU takes minutes to compile a pipeline
# whose steps a loop in Python unrolls that many times.
PIPELINE_SCALE = Scale(
    pipeline_cases((("8:i", "i", 8, 1024, 4096, "bfloat16", False),))[0],
    "8 stages of a 4096-wide layer, 8 micro-batches of 1024 tokens: 7 of its 15 steps a bubble",
)


def _pipeline(
    name: str, points: dict[str, float], sizes: tuple[tuple[str, str, int, int, int, str, bool], ...]
) -> Task:
    """A pipeline part: stage s on device s, activations handed to the neighbour with ppermute,
    and every device returning the last stage's output for every micro-batch (so the outputs
    travel too); differentiated cases grade the backward pass through the pipeline."""
    return Task(
        name=name,
        grade_id=f"test_{name}",
        kind="shard_map",
        points=points,
        bounds=PIPELINE_BOUNDS,
        cases=pipeline_cases(sizes),
        inputs=tuple(Input(layout) for layout in PIPELINE_LAYOUTS),
        tolerance=TOLERANCE,
        allowed=frozenset({"ppermute"}),
        neighbours_only=True,
        at_scale=PIPELINE_SCALE,
    )


ASSIGNMENT = Assignment(
    name="06_pipeline_experts",
    notebook="06_pipeline_experts.ipynb",
    solutions="pipeline_experts",
    tasks=(
        _pipeline(
            "gpipe",
            {"values": 3.0, "hidden values": 3.0, "technique": 4.0, "communication": 4.0},
            (
                ("4:i", "i", 4, 2, 8, "float32", False),
                ("8:i", "i", 6, 2, 8, "float32", True),
                ("2x4:x,y", "y", 3, 2, 8, "float32", False),
            ),
        ),
        Task(
            name="bubble_fraction",
            grade_id="test_bubble_fraction",
            kind="python",
            # A plain-Python part's visible answers are in the student's hands: its hidden cases weigh more.
            points={"values": 2.0, "hidden values": 4.0},
            cases=tuple(Case(args=args) for args in ((4, 8, 2), (4, 2, 3), (8, 16, 1))),
            hidden_vary="other stage, micro-batch and chunk counts",
        ),
        Task(
            name="moe_layer",
            grade_id="test_moe_layer",
            kind="shard_map",
            points={"values": 3.0, "hidden values": 3.0, "technique": 4.0, "communication": 4.0},
            bounds=MOE_BOUNDS,
            # A capacity no expert can overflow, then one that drops tokens.
            cases=moe_cases((("8:i", "i", 16, 8, 16), ("8:i", "i", 16, 8, 2), ("2x4:x,y", "y", 8, 8, 3))),
            at_scale=Scale(
                dataclasses.replace(moe_cases((("8:i", "i", 4096, 4096, 640),))[0], dtype="bfloat16"),
                "8 experts of a 4096-wide layer, 4096 tokens a device, each expert taking 640 from each (1.25x its share)",
            ),
            inputs=tuple(Input(layout) for layout in MOE_LAYOUTS),
            out_layout=MOE_LAYOUTS[0],
            tolerance=TOLERANCE,
            allowed=frozenset({"all_to_all"}),
        ),
        _pipeline(
            "fixed_pipeline",
            {"values": 4.0, "hidden values": 4.0, "technique": 4.0, "communication": 4.0},
            (("4:i", "i", 4, 2, 8, "float32", False), ("8:i", "i", 3, 2, 8, "float32", True)),
        ),
    ),
)
