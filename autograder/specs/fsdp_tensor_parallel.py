"""Assignment 04_fsdp_tensor_parallel: the roofline of data, fully sharded and tensor parallelism,
then an FSDP step, a Megatron MLP block and a step on a 2-D ``data`` x ``model`` mesh.

What the students are given (the model, the hardware, the layouts) lives in
``given/fsdp_tensor_parallel.py``. The roofline's closed forms are part 1's answer, and what the
steps send and hold is the instructor's too: both live in ``solutions/fsdp_tensor_parallel.py``.
"""

from __future__ import annotations

from ..core.tasks import REPLICATED, Assignment, Bound, Bounds, Case, Input, Scale, Step, Task
from ..core.tolerance import Tolerance
from .given.fsdp_tensor_parallel import (
    COLS,
    FSDP_LAYOUTS,
    FSDP_PATHS,
    H100,
    MODEL,
    ROWS,
    SMALL,
    STATE,
    TPU,
    TWO_D_LAYOUTS,
    TWO_D_PATHS,
    megatron_cases,
    mlp_cases,
)

ROOFLINE_CASES = tuple(
    Case(args=(strategy, model, hardware, tokens))
    for strategy, model, hardware, tokens in (
        ("dp", MODEL, H100, 4e6),
        ("fsdp", MODEL, H100, 4e6),
        ("tp", MODEL, H100, 4e6),
        ("fsdp", SMALL, TPU, 1e5),
    )
)
CRITICAL_CASES = tuple(Case(args=(strategy, MODEL, H100)) for strategy in ("dp", "fsdp", "tp"))
FSDP_VISIBLE = mlp_cases((("8:data", 16, 16, 32), ("2x4:data,model", 8, 8, 16)), FSDP_LAYOUTS)
TWO_D_VISIBLE = mlp_cases((("2x4:data,model", 16, 8, 32),), TWO_D_LAYOUTS)

STEP_TOLERANCE = {"float32": (1e-4, 1e-5)}
# bfloat16: the MLP's gradients sum products in the thousands, where bfloat16's values are 8 or 16
# apart, and a small entry is a difference of such sums; its forward pass reaches tens. So atol is
# a share of each case's largest value: 4x the reference's own error against float32 on its
# bfloat16 cases needs 0.012 of it beside rtol 2e-2 (benchmarks/bf16_tolerances.py, held by
# tests/trusted/test_tolerances.py); rounded up.
ACTIVATIONS_TOLERANCE: dict[str, Tolerance] = {
    "float32": Tolerance(1e-4, 1e-4),
    "bfloat16": Tolerance(2e-2, 0.0, of_largest=2e-2),
}
# A plain-Python part's visible answers are in the student's hands: its hidden cases weigh more.
ROOFLINE_POINTS = {"values": 4.0, "hidden values": 5.0}

# What a device holds after a step is its layout, exact for any spelling of the step: past 1.5x of
# the reference's, some leaf is held whole (2x on the smallest split of these meshes), which is not
# the technique; the memory part then allows no more than the reference's. A step that does not
# split its batch, or its matmuls over `model`, multiplies 2x to 8x the reference's FLOPs.
HELD = "each device keeps its share of every weight and of its momentum after the step"
MEGATRON_SENT = "Megatron's block all-reduces its output once (and, backward, its input's gradient once)"
SPLIT_WORK = "each device multiplies only its rows of the batch (and, over `model`, its block of each weight)"

ASSIGNMENT = Assignment(
    name="04_fsdp_tensor_parallel",
    notebook="04_fsdp_tensor_parallel.ipynb",
    solutions="fsdp_tensor_parallel",
    tasks=(
        Task(
            name="step_times",
            grade_id="test_step_times",
            kind="python",
            points=ROOFLINE_POINTS,
            cases=ROOFLINE_CASES,
            hidden_vary="another model on another machine, and other token counts",
        ),
        Task(
            name="critical_batch",
            grade_id="test_critical_batch",
            kind="python",
            points={"values": 3.0, "hidden values": 3.0},
            cases=CRITICAL_CASES,
            hidden_vary="another model on another machine",
        ),
        Task(
            name="fsdp_step",
            grade_id="test_fsdp_step",
            kind="sharded_step",
            points={"values": 4.0, "hidden values": 2.0, "technique": 3.0, "memory": 2.0, "communication": 2.0},
            bounds={
                "technique": Bounds(
                    resident=Bound(1.5, HELD),
                    flops=Bound(1.5, SPLIT_WORK),
                    traffic=Bound(2.0, "FSDP gathers each weight and reduce-scatters its gradient, no more"),
                ),
                "memory": Bounds(resident=Bound(1.0, HELD)),
                "communication": Bounds(
                    traffic=Bound(1.0, "a reduce-scatter sends half what an all-reduce of the gradients does")
                ),
            },
            cases=FSDP_VISIBLE,
            at_scale=Scale(
                mlp_cases((("8:data", 8192, 4096, 16384),), FSDP_LAYOUTS)[0],
                "a 4096-wide MLP of 16384 trained on 8192 tokens a step, in float32 with its optimizer state, over 8 devices",
            ),
            inputs=tuple(Input(layout) for layout in FSDP_LAYOUTS),
            tolerance=STEP_TOLERANCE,
            step=Step(FSDP_PATHS, STATE),
        ),
        Task(
            name="megatron_mlp",
            grade_id="test_megatron_mlp",
            kind="shard_map",
            points={"values": 4.0, "hidden values": 2.0, "technique": 3.0, "communication": 3.0},
            # A second all-reduce (of the hidden activation, 4x the output here) is 1.5x past the
            # reference's traffic; gathering a weight multiplies the whole of it on every device.
            bounds={
                "technique": Bounds(
                    flops=Bound(1.5, "each device multiplies by its own columns of w1 and rows of w2"),
                    traffic=Bound(1.5, MEGATRON_SENT),
                ),
                "communication": Bounds(traffic=Bound(1.0, MEGATRON_SENT)),
            },
            cases=megatron_cases((("8:model", 8, 16, 64, "float32"), ("2x4:data,model", 4, 8, 32, "float32"))),
            at_scale=Scale(
                megatron_cases((("8:model", 8192, 4096, 16384, "bfloat16"),))[0],
                "a 4096-wide MLP of 16384 on a batch of 8192 tokens, its weights split 8 ways",
            ),
            inputs=(Input(REPLICATED), Input(COLS), Input(ROWS)),
            out_layout=REPLICATED,
            tolerance=ACTIVATIONS_TOLERANCE,
            allowed=frozenset({"psum"}),
        ),
        Task(
            # Graded on what it teaches: only all-reduces, over `model` (the Megatron pair's) and
            # over `data` (the gradients'), and each device holding its share of the weights.
            name="dp_tp_step",
            grade_id="test_dp_tp_step",
            kind="sharded_step",
            points={"values": 3.0, "hidden values": 2.0, "technique": 3.0, "memory": 2.0},
            bounds={
                "technique": Bounds(resident=Bound(1.5, HELD), flops=Bound(1.5, SPLIT_WORK)),
                "memory": Bounds(resident=Bound(1.0, HELD)),
            },
            cases=TWO_D_VISIBLE,
            at_scale=Scale(
                mlp_cases((("2x4:data,model", 8192, 4096, 16384),), TWO_D_LAYOUTS)[0],
                "the same MLP and batch on 2 data-parallel groups of 4 tensor-parallel devices",
            ),
            inputs=tuple(Input(layout) for layout in TWO_D_LAYOUTS[:-1]) + (Input(REPLICATED, "key", "key"),),
            tolerance=STEP_TOLERANCE,
            axis_collectives=(("data", frozenset({"psum"})), ("model", frozenset({"psum"}))),
            step=Step(TWO_D_PATHS, STATE),
        ),
    ),
)
