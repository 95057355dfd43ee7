"""Independent stand-ins for transformer_parallel's references, written another way (on JAX's own
collectives, sharding and attention, or by trying every split): tests/specs/test_oracles.py holds
the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any

from autograder.specs.given.transformer_parallel import EPS, block_loss, sgd_momentum

FLOAT32_MOMENTS = 8  # Adam's two moments, 4 bytes each, per parameter


def _explicit_oracle(params: Any, opt_state: Any, batch: Any) -> Any:
    """The step on whole arrays, every one on every device: no sharding rules to get wrong."""
    import jax

    params, opt_state, batch = jax.tree.map(lambda v: jax.reshard(v, jax.P()), (params, opt_state, batch))
    loss, grads = jax.value_and_grad(block_loss)(params, batch["x"], batch["y"])
    params, mu = sgd_momentum(params, opt_state["mu"], grads)
    return params, {"mu": mu}, loss


def _attention_oracle(q: Any, k: Any, v: Any, axis_name: str, causal: bool) -> Any:
    """JAX's own attention of my queries over the whole gathered sequence, masked by position."""
    import jax
    import jax.numpy as jnp

    block, me, dtype = q.shape[0], jax.lax.axis_index(axis_name), q.dtype
    k, v = (jax.lax.all_gather(a, axis_name, axis=0, tiled=True) for a in (k, v))
    mask = None
    if causal:
        mask = (jnp.arange(k.shape[0])[None, :] <= me * block + jnp.arange(block)[:, None])[None, None]
    q, k, v = (a.astype(jnp.float32)[None, :, None, :] for a in (q, k, v))  # (batch, sequence, heads, dim)
    return jax.nn.dot_product_attention(q, k, v, mask=mask)[0, :, 0, :].astype(dtype)


def _block_oracle(x: Any, gamma: Any, w1: Any, w2: Any, axis_name: str) -> Any:
    """The whole block on every device from gathered weights and rows, then my rows of it."""
    import jax

    xs, w1, w2 = (jax.lax.all_gather(a, axis_name, axis=axis, tiled=True) for a, axis in ((x, 0), (w1, 1), (w2, 0)))
    out = xs + jax.nn.relu(jax.nn.standardize(xs, axis=1, epsilon=EPS) * gamma @ w1) @ w2
    me, rows = jax.lax.axis_index(axis_name), x.shape[0]
    return jax.lax.dynamic_slice_in_dim(out, me * rows, rows)


def _plan_oracle(model: dict[str, Any], batch: int, seq: int, hardware: dict[str, Any]) -> tuple:
    """Every split of the devices, scored, the ones that break a rule left out, the fastest kept
    (the first found, trying the most data-parallel first, on a tie)."""
    n, b = hardware["devices"], model["bytes"]
    per_layer = 4 * model["d_model"] ** 2 + 2 * model["d_model"] * model["d_ff"]
    params = model["layers"] * per_layer
    tokens = batch * seq
    best = None
    for model_degree in range(1, n + 1):
        data = n // model_degree
        if data * model_degree != n or batch % data or model["heads"] % model_degree:
            continue
        held = params * (b + b + FLOAT32_MOMENTS) / n
        stored = model["d_model"] + (4 * model["d_model"] + model["d_ff"]) / model_degree  # per token and layer
        memory = held + model["layers"] * tokens / data * stored * b
        if memory > hardware["memory"]:
            continue
        gathers = 3 * (1 - 1 / data) * (params / model_degree) * b
        all_reduces = model["layers"] * 4 * 2 * (1 - 1 / model_degree) * (tokens / data) * model["d_model"] * b
        seconds = 6 * params * tokens / (n * hardware["flops"]) + (gathers + all_reduces) / hardware["bandwidth"]
        if best is None or seconds < best[3]:  # model degrees rise: on a tie, the more data-parallel stays
            best = (data, model_degree, memory, seconds)
    if best is None:
        raise ValueError("nothing fits")
    return best


ORACLES = {
    "explicit_step": _explicit_oracle,
    "ring_attention": _attention_oracle,
    "sequence_parallel_block": _block_oracle,
    "plan_split": _plan_oracle,
}
