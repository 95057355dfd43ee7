"""Assignment 05_transformer_parallel: a training step in explicit sharding mode with FSDP and
tensor parallelism on one 2-D mesh, ring attention over a split sequence, Megatron's block with
sequence parallelism, and a planner that picks the split of the devices.

What the students are given (the block, its layouts, the planner's models and hardware) lives in
``given/transformer_parallel.py``. What the ring and the block send, how often the ring sends, what
a device holds after the step and the planner's answers are the instructor's: they live in
``solutions/transformer_parallel.py``.
"""

from __future__ import annotations

from ..core.tasks import Assignment, Case, Input, Step, Task
from .given.transformer_parallel import (
    BLOCK_LAYOUTS,
    GPT,
    H100_NODE,
    ROWS,
    SMALL_GPT,
    STATE,
    STEP_LAYOUTS,
    STEP_PATHS,
    attention_cases,
    block_cases,
    step_cases,
)

STEP_TOLERANCE = {"float32": (1e-4, 1e-5)}
ACTIVATIONS_TOLERANCE = {"float32": (1e-4, 1e-4), "bfloat16": (2e-2, 2e-1)}

PLAN_CASES = tuple(
    Case(args=(model, batch, seq, hardware))
    for model, batch, seq, hardware in (
        (GPT, 32, 2048, H100_NODE),
        (GPT, 2, 8192, H100_NODE),
        (SMALL_GPT, 8, 2048, H100_NODE),
    )
)

ASSIGNMENT = Assignment(
    name="05_transformer_parallel",
    notebook="05_transformer_parallel.ipynb",
    solutions="transformer_parallel",
    tasks=(
        Task(
            # Graded on what it teaches: the weights gathered and their gradients reduce-scattered
            # over `data`, one all-reduce per matmul pair over `model`, each device holding an
            # eighth of the weights and their momentum after the step, and, with the old state
            # donated, no second copy of it at the step's peak.
            name="explicit_step",
            grade_id="test_explicit_step",
            kind="sharded_step",
            points={"values": 4.0, "hidden values": 2.0, "collectives": 3.0, "memory": 3.0, "peak memory": 2.0},
            cases=step_cases((("2x4:data,model", 8, 16, 32),)),
            inputs=tuple(Input(layout) for layout in STEP_LAYOUTS),
            tolerance=STEP_TOLERANCE,
            axis_collectives=(
                ("data", frozenset({"all_gather", "psum_scatter", "psum"})),
                ("model", frozenset({"psum"})),
            ),
            step=Step(STEP_PATHS, STATE),
        ),
        Task(
            name="ring_attention",
            grade_id="test_ring_attention",
            kind="shard_map",
            points={"values": 3.0, "hidden values": 3.0, "collectives": 4.0, "communication": 4.0},
            cases=attention_cases(
                (
                    ("8:i", "i", 32, 8, "float32", False),
                    ("8:i", "i", 32, 8, "float32", True),
                    ("2x4:x,y", "y", 16, 8, "float32", True),
                )
            ),
            inputs=(Input(ROWS),) * 3,
            out_layout=ROWS,
            tolerance=ACTIVATIONS_TOLERANCE,
            allowed=frozenset({"ppermute"}),
            required=frozenset({"ppermute"}),
            neighbours_only=True,
            overlapped=True,
        ),
        Task(
            name="sequence_parallel_block",
            grade_id="test_sequence_parallel_block",
            kind="shard_map",
            points={"values": 3.0, "hidden values": 3.0, "collectives": 3.0, "communication": 3.0},
            cases=block_cases(
                (
                    ("8:i", "i", 16, 8, 32, "float32", False),
                    ("8:i", "i", 16, 8, 32, "float32", True),
                    ("2x4:x,y", "y", 8, 8, 16, "float32", False),
                )
            ),
            inputs=tuple(Input(layout) for layout in BLOCK_LAYOUTS),
            out_layout=ROWS,
            tolerance=ACTIVATIONS_TOLERANCE,
            allowed=frozenset({"all_gather", "psum_scatter"}),
            required=frozenset({"all_gather", "psum_scatter"}),
        ),
        Task(
            name="plan_split",
            grade_id="test_plan_split",
            kind="python",
            # A plain-Python part's visible answers are in the student's hands: its hidden cases weigh more.
            points={"values": 4.0, "hidden values": 6.0},
            cases=PLAN_CASES,
        ),
    ),
)
