"""What students of 04_fsdp_tensor_parallel are given: the roofline's model and hardware, the MLP
every part trains (``relu(x @ w1) @ w2`` with a squared-error loss, SGD with momentum, dropout in
the 2-D step) and where each of its arrays lives. The notebook imports these; the task spec
(``specs/fsdp_tensor_parallel.py``) builds its cases from them."""

from __future__ import annotations

import math
from typing import Any

from ...core.tasks import REPLICATED, Case, Layout

LEARNING_RATE, MOMENTUM = 0.1, 0.9  # the steps' SGD with momentum
KEEP = 0.75  # the 2-D step's dropout: the chance a value of the block's output is kept

# Part 1, the roofline: a model of P parameters in L tensor-parallel blocks of width d, each value
# b bytes; N devices of F flop/s each, W bytes/s of link each.
MODEL = {"params": 7e9, "layers": 32, "d_model": 4096, "bytes": 2}
H100 = {"devices": 8, "flops": 1e15, "bandwidth": 4.5e11}
SMALL = {"params": 1.3e9, "layers": 24, "d_model": 2048, "bytes": 2}
TPU = {"devices": 16, "flops": 2e14, "bandwidth": 1e11}

# Part 2, the FSDP step: every parameter and its momentum split by rows over `data`.
ROWS_OVER_DATA = Layout(("data", None))
FSDP_LAYOUTS = (ROWS_OVER_DATA,) * 6
FSDP_PATHS = ("params/w1", "params/w2", "opt_state/mu/w1", "opt_state/mu/w2", "batch/x", "batch/y")
STATE = ("params", "opt_state")

# Part 3, the Megatron block, on the case's axis (`model`).
COLS = Layout((None, "AXIS"))
ROWS = Layout(("AXIS", None))

# Part 4, DP x TP: weights split over `model` as in part 3, the batch over `data`.
TWO_D_PATHS = (*FSDP_PATHS, "key")
BY_DATA = Layout(("data", None))
TWO_D_LAYOUTS = (Layout((None, "model")), Layout(("model", None))) * 2 + (BY_DATA, BY_DATA, REPLICATED)


def mlp_cases(sizes: tuple[tuple[str, int, int, int], ...], layouts: tuple[Layout, ...]) -> tuple[Case, ...]:
    """Cases from (mesh, batch, d_model, hidden): each array's per-device shape follows from its
    layout on the mesh (w1 is d x h, w2 h x d, x and y batch x d, then a key where there is one)."""
    cases = []
    for mesh, b, d, h in sizes:
        globals_ = ((d, h), (h, d), (d, h), (h, d), (b, d), (b, d), ())
        spec = Case(mesh).mesh_spec
        shapes = tuple(_local(shape, layout, spec.axis_sizes) for shape, layout in zip(globals_, layouts))
        cases.append(Case(mesh, shapes=shapes))
    return tuple(cases)


def _local(shape: tuple[int, ...], layout: Layout, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(
        n // math.prod(sizes[a] for a in _axes(entry))
        for n, entry in zip(shape, layout.template + (None,) * len(shape))
    )


def _axes(entry: Any) -> tuple[str, ...]:
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def megatron_cases(sizes: tuple[tuple[str, int, int, int, str], ...]) -> tuple[Case, ...]:
    """Forward and differentiated cases from (mesh, batch, d_model, hidden, dtype)."""
    cases = []
    for mesh, b, d, h, dtype in sizes:
        n = Case(mesh).mesh_spec.axis_sizes["model"]
        case = Case(mesh, "model", ((b, d), (d, h // n), (h // n, d)), dtype)
        cases += [case, Case(mesh, "model", case.shapes, dtype, differentiate=True)]
    return tuple(cases)


def mlp_loss(params: dict[str, Any], x: Any, y: Any, keep: Any = None) -> Any:
    """Mean squared error of the MLP on (x, y); ``keep``, a mask, drops the output's values."""
    import jax
    import jax.numpy as jnp

    out = jax.nn.relu(x @ params["w1"]) @ params["w2"]
    if keep is not None:
        out = jnp.where(keep, out / KEEP, 0.0)
    return jnp.mean(jnp.square(out - y))


def sgd_momentum(params: dict[str, Any], mu: dict[str, Any], grads: dict[str, Any]) -> tuple[Any, Any]:
    """One step of SGD with momentum: the new parameters and momentum."""
    import jax

    mu = jax.tree.map(lambda m, g: MOMENTUM * m + g, mu, grads)
    return jax.tree.map(lambda p, m: p - LEARNING_RATE * m, params, mu), mu
