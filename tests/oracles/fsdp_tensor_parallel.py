"""Independent stand-ins for fsdp_tensor_parallel's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any

from autograder.specs.given.fsdp_tensor_parallel import KEEP, mlp_loss, sgd_momentum

BACKWARD = 2  # the backward pass costs twice the forward: 2 flops per parameter per token, then 4


def compute_seconds(model: dict[str, float], hardware: dict[str, float], tokens: float) -> float:
    """Forward and backward over every device: 2 (1 + BACKWARD) P T / (N F)."""
    return 2 * (1 + BACKWARD) * model["params"] * tokens / (hardware["devices"] * hardware["flops"])


def comm_seconds(strategy: str, model: dict[str, float], hardware: dict[str, float], tokens: float) -> float:
    """What one device sends per step, over its bandwidth: an all-reduce of the gradients (DP);
    gathering the weights for the forward pass and again for the backward pass, then a
    reduce-scatter of the gradients (FSDP); per layer, one all-reduce of the activations forward
    and one backward for each of its two blocks, attention and MLP (TP)."""
    n = hardware["devices"]
    ring = (n - 1) / n  # of an array, what a ring all-gather or reduce-scatter sends per device
    weights = model["params"] * model["bytes"]
    sent = {
        "dp": 2 * ring * weights,
        "fsdp": 3 * ring * weights,
        "tp": 4 * model["layers"] * 2 * ring * tokens * model["d_model"] * model["bytes"],
    }
    if strategy not in sent:
        raise ValueError(f"unknown strategy {strategy!r}; one of dp, fsdp, tp")
    return sent[strategy] / hardware["bandwidth"]


def step_times(
    strategy: str, model: dict[str, float], hardware: dict[str, float], tokens: float
) -> tuple[float, float]:
    """(compute, communication) seconds per step, per device."""
    return compute_seconds(model, hardware, tokens), comm_seconds(strategy, model, hardware, tokens)


def critical_batch(strategy: str, model: dict[str, float], hardware: dict[str, float]) -> float:
    """The global batch, in tokens, at which compute time equals communication time; TP has none,
    since both grow with the batch."""
    if strategy == "tp":
        raise ValueError("tensor parallelism has no critical batch: compute and communication both grow with it")
    # Compute grows linearly with the batch and DP's and FSDP's communication not at all.
    return comm_seconds(strategy, model, hardware, 0.0) / compute_seconds(model, hardware, 1.0)


def _whole(tree: Any) -> Any:
    """Every array of ``tree`` whole on every device, so the oracles need no sharding rules."""
    import jax

    return jax.tree.map(lambda v: jax.reshard(v, jax.P()), tree)


def _fsdp_oracle(params: Any, opt_state: Any, batch: Any) -> Any:
    import jax

    params, opt_state, batch = _whole((params, opt_state, batch))
    loss, grads = jax.value_and_grad(mlp_loss)(params, batch["x"], batch["y"])
    params, mu = sgd_momentum(params, opt_state["mu"], grads)
    return params, {"mu": mu}, loss


def _megatron_oracle(x: Any, w1: Any, w2: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum(jax.nn.relu(x @ w1) @ w2, axis_name)


def _two_d_oracle(params: Any, opt_state: Any, batch: Any, key: Any) -> Any:
    """The same step on the whole batch, each row's mask drawn as the task asks: from the key
    folded with the index, along `data`, of the device that holds the row."""
    import jax
    import jax.numpy as jnp

    data = jax.sharding.get_abstract_mesh().shape["data"]
    params, opt_state, batch = _whole((params, opt_state, batch))
    rows, d = batch["x"].shape[0] // data, params["w2"].shape[1]
    keep = jnp.concatenate([jax.random.bernoulli(jax.random.fold_in(key, i), KEEP, (rows, d)) for i in range(data)])
    loss, grads = jax.value_and_grad(mlp_loss)(params, batch["x"], batch["y"], keep)
    params, mu = sgd_momentum(params, opt_state["mu"], grads)
    return params, {"mu": mu}, loss


ORACLES = {
    "step_times": step_times,
    "critical_batch": critical_batch,
    "fsdp_step": _fsdp_oracle,
    "megatron_mlp": _megatron_oracle,
    "dp_tp_step": _two_d_oracle,
}
