"""What students of 06_pipeline_experts are given: the layer every pipeline stage applies, where
the pipelines' and the mixture of experts' arrays live, how their cases are built, and the broken
pipeline of part 4. The notebook imports these; the task spec (``specs/pipeline_experts.py``)
builds its cases from them."""

from __future__ import annotations

from typing import Any

from ...core.mesh import MeshSpec
from ...core.tasks import REPLICATED, Case, Layout

# Pipelines: stage s's weights on device s of the axis, every micro-batch on every device (stage 0
# reads them; the others ignore theirs).
STAGE_WEIGHTS = Layout(("AXIS", None, None))
PIPELINE_LAYOUTS = (STAGE_WEIGHTS, REPLICATED)  # weights, micro-batches
# The mixture of experts: the tokens by rows over the axis, the router whole, one expert a device.
ROWS = Layout(("AXIS", None))
MOE_LAYOUTS = (ROWS, REPLICATED, STAGE_WEIGHTS)  # x, router, experts


def stage(h: Any, w: Any) -> Any:
    """One pipeline stage: a (batch, d) activation through the stage's (d, d) layer."""
    import jax.numpy as jnp

    return jnp.tanh(h @ w)


def pipeline_cases(sizes: tuple[tuple[str, str, int, int, int, str, bool], ...]) -> tuple[Case, ...]:
    """A pipeline's cases from (mesh, axis, micro-batches, micro-batch rows, d, dtype,
    differentiate): one (1, d, d) layer per device, the (micro-batches, rows, d) inputs whole on
    every device."""
    return tuple(
        Case(mesh, axis, ((1, d, d), (micro, rows, d)), dtype, differentiate=differentiate)
        for mesh, axis, micro, rows, d, dtype, differentiate in sizes
    )


def moe_cases(sizes: tuple[tuple[str, str, int, int, int], ...]) -> tuple[Case, ...]:
    """The mixture of experts' cases from (mesh, axis, tokens per device, d, capacity): one
    expert per device of the axis, so the router scores as many experts as the axis has devices."""
    cases = []
    for mesh, axis, tokens, d, capacity in sizes:
        experts = MeshSpec.parse(mesh).axis_sizes[axis]
        shapes = ((tokens, d), (d, experts), (1, d, d))
        cases.append(Case(mesh, axis, shapes, kwargs=(("capacity", capacity),)))
    return tuple(cases)


def broken_pipeline(weights: Any, x: Any, axis_name: str) -> Any:
    """Part 4's pipeline as it was handed over: every device returns the last stage's output for
    every micro-batch. It was tested on two stages only."""
    import jax
    import jax.numpy as jnp

    stages, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    micro = x.shape[0]
    right = [(j, j + 1) for j in range(stages - 1)]
    lag = jnp.minimum(me, 1)  # how many steps after stage 0 this stage starts

    def work(t: Any, h: Any, outputs: Any) -> tuple[Any, Any]:
        h = stage(jnp.where(me == 0, x[jnp.minimum(t, micro - 1)], h), weights[0])
        done = (me == stages - 1) & (t - lag >= 0) & (t - lag < micro)
        slot = jnp.clip(t - lag, 0, micro - 1)
        return h, jnp.where(done, outputs.at[slot].set(h), outputs)

    def step(t: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        h, outputs = carry
        return work(t, jax.lax.ppermute(h, axis_name, right), outputs)

    h, outputs = work(0, jnp.zeros(x.shape[1:], x.dtype), jnp.zeros_like(x))
    _, outputs = jax.lax.fori_loop(1, micro + 1, step, (h, outputs))
    for _ in range(stages - 1):  # the last stage's outputs go round the ring to every device
        passed = jax.lax.ppermute(outputs, axis_name, [(j, (j + 1) % stages) for j in range(stages)])
        outputs = jnp.where(me == stages - 1, outputs, passed)
    return outputs
