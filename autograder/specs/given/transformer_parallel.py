"""What students of 05_transformer_parallel are given: the block the explicit step trains (the MLP
half of a transformer block, ``x + relu(x @ w1) @ w2``, with a squared-error loss and SGD with
momentum), where each of its arrays lives, the layouts of ring attention and of the
sequence-parallel block, and the models and hardware the planner meets. The notebook imports these;
the task spec (``specs/transformer_parallel.py``) builds its cases from them."""

from __future__ import annotations

from typing import Any

from ...core.mesh import MeshSpec
from ...core.tasks import REPLICATED, Case, Layout
from .fsdp_tensor_parallel import mlp_cases
from .fsdp_tensor_parallel import sgd_momentum as sgd_momentum  # the step's optimizer is 04's

# Part 1, the explicit step: every weight and its momentum split over both axes (FSDP over
# `data`, TP over `model`: w1's rows over data and columns over model, w2 the other way round),
# the batch split by rows over `data`.
W1_AT_REST = Layout(("data", "model"))
W2_AT_REST = Layout(("model", "data"))
BY_DATA = Layout(("data", None))
STEP_LAYOUTS = (W1_AT_REST, W2_AT_REST, W1_AT_REST, W2_AT_REST, BY_DATA, BY_DATA)
STEP_PATHS = ("params/w1", "params/w2", "opt_state/mu/w1", "opt_state/mu/w2", "batch/x", "batch/y")
STATE = ("params", "opt_state")

# Parts 2 and 3: blocks of the sequence (rows) over the case's axis; Megatron's weight splits.
ROWS = Layout(("AXIS", None))
COLS = Layout((None, "AXIS"))
BLOCK_LAYOUTS = (ROWS, REPLICATED, COLS, ROWS)  # x, gamma, w1, w2
EPS = 1e-5  # the layernorm's


def step_cases(sizes: tuple[tuple[str, int, int, int], ...]) -> tuple[Case, ...]:
    """The explicit step's cases from (mesh, batch, d_model, hidden)."""
    return mlp_cases(sizes, STEP_LAYOUTS)


def attention_cases(sizes: tuple[tuple[str, str, int, int, str, bool], ...]) -> tuple[Case, ...]:
    """Ring attention's cases from (mesh, axis, global sequence, head dim, dtype, causal): q, k
    and v each hold the device's block of the sequence."""
    cases = []
    for mesh, axis, seq, dim, dtype, causal in sizes:
        block = (seq // MeshSpec.parse(mesh).axis_sizes[axis], dim)
        cases.append(Case(mesh, axis, (block,) * 3, dtype, kwargs=(("causal", causal),)))
    return tuple(cases)


def block_cases(sizes: tuple[tuple[str, str, int, int, int, str, bool], ...]) -> tuple[Case, ...]:
    """The sequence-parallel block's cases from (mesh, axis, global sequence, d_model, hidden,
    dtype, differentiate): x's rows, gamma whole, w1's columns and w2's rows over the axis."""
    cases = []
    for mesh, axis, seq, d, h, dtype, differentiate in sizes:
        n = MeshSpec.parse(mesh).axis_sizes[axis]
        shapes = ((seq // n, d), (d,), (d, h // n), (h // n, d))
        cases.append(Case(mesh, axis, shapes, dtype, differentiate=differentiate))
    return tuple(cases)


def block_loss(params: dict[str, Any], x: Any, y: Any, out_sharding: Any = None) -> Any:
    """Mean squared error of ``x + relu(x @ w1) @ w2`` on (x, y); ``out_sharding``, in explicit
    mode, says where the second matmul's output lives (its contraction may be split)."""
    import jax
    import jax.numpy as jnp

    out = x + jnp.matmul(jax.nn.relu(x @ params["w1"]), params["w2"], out_sharding=out_sharding)
    return jnp.mean(jnp.square(out - y))


# Part 4, the planner: a transformer of `layers` blocks of width `d_model`, an MLP of `d_ff`,
# `heads` attention heads and values of `bytes` bytes; devices of `flops` flop/s, `bandwidth`
# bytes/s of links and `memory` bytes each.
GPT = {"layers": 48, "d_model": 6144, "heads": 48, "d_ff": 24576, "bytes": 2}
SMALL_GPT = {"layers": 24, "d_model": 2048, "heads": 16, "d_ff": 8192, "bytes": 2}
H100_NODE = {"devices": 8, "flops": 1e15, "bandwidth": 4.5e11, "memory": 80e9}
