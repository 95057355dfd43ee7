"""Reference solutions for 04_fsdp_tensor_parallel, the hidden cases the grader adds, and the
closed forms (TARGETS) of what the steps send and hold, and of the Megatron block's all-reduces.

Each function body here is the single source of the matching solution region in
assignments/source/04_fsdp_tensor_parallel/04_fsdp_tensor_parallel.ipynb (tests/specs/test_solutions_sync.py checks it).
"""

import jax
import jax.numpy as jnp

from autograder.core.tasks import DTYPE_BYTES, Case, Targets
from autograder.specs.given.fsdp_tensor_parallel import (
    FSDP_LAYOUTS,
    KEEP,
    SMALL,
    TPU,
    TWO_D_LAYOUTS,
    megatron_cases,
    mlp_cases,
    mlp_loss,
    sgd_momentum,
)


def step_times(strategy, model, hardware, tokens):
    n = hardware["devices"]
    compute = 6 * model["params"] * tokens / (n * hardware["flops"])  # 2 flops per parameter and token forward, 4 backward
    ring = (n - 1) / n  # of an array, what a ring all-gather or reduce-scatter sends per device
    weights = model["params"] * model["bytes"]
    sent = {
        "dp": 2 * ring * weights,  # all-reduce the gradients
        "fsdp": 3 * ring * weights,  # gather the weights forward, again backward; reduce-scatter the gradients
        # an all-reduce each way for each of a layer's two blocks, its attention and its MLP
        "tp": model["layers"] * 4 * (2 * ring * tokens * model["d_model"] * model["bytes"]),
    }
    return compute, sent[strategy] / hardware["bandwidth"]


def critical_batch(strategy, model, hardware):
    if strategy == "tp":
        raise ValueError("tensor parallelism has no critical batch: compute and communication both grow with it")
    per_token, _ = step_times(strategy, model, hardware, 1.0)
    _, communication = step_times(strategy, model, hardware, 0.0)  # DP's and FSDP's do not depend on the batch
    return communication / per_token


def fsdp_step(params, opt_state, batch):
    def local_step(shards, mu, batch):
        def loss_of(shards):
            whole = jax.tree.map(lambda w: jax.lax.all_gather(w, "data", axis=0, tiled=True), shards)
            return mlp_loss(whole, batch["x"], batch["y"]) / jax.lax.axis_size("data")

        loss, grads = jax.value_and_grad(loss_of)(shards)  # all_gather's transpose: a reduce-scatter
        shards, mu = sgd_momentum(shards, mu, grads)
        return shards, mu, jax.lax.psum(loss, "data")

    rows = jax.P("data")
    step = jax.shard_map(local_step, in_specs=rows, out_specs=(rows, rows, jax.P()))
    params, mu, loss = step(params, opt_state["mu"], batch)
    return params, {"mu": mu}, loss


def megatron_mlp(x, w1, w2, axis_name):
    h = jax.nn.relu(x @ w1)  # column-parallel: this device's hidden units, nothing sent
    return jax.lax.psum(h @ w2, axis_name)  # row-parallel: partial sums of every output, one all-reduce


def dp_tp_step(params, opt_state, batch, key):
    def local_step(params, mu, batch, key):
        mine = jax.random.fold_in(key, jax.lax.axis_index("data"))  # my rows' key; the same along model
        keep = jax.random.bernoulli(mine, KEEP, batch["y"].shape)

        def loss_of(params):
            out = megatron_mlp(batch["x"], params["w1"], params["w2"], "model")
            out = jnp.where(keep, out / KEEP, 0.0)
            return jnp.mean(jnp.square(out - batch["y"])) / jax.lax.axis_size("data")

        loss, grads = jax.value_and_grad(loss_of)(params)  # summed over data: the weights are the same along it
        params, mu = sgd_momentum(params, mu, grads)
        return params, mu, jax.lax.psum(loss, "data")

    weights = {"w1": jax.P(None, "model"), "w2": jax.P("model", None)}
    rows = jax.P("data")
    step = jax.shard_map(local_step, in_specs=(weights, weights, rows, jax.P()), out_specs=(weights, weights, jax.P()))
    params, mu, loss = step(params, opt_state["mu"], batch, key)
    return params, {"mu": mu}, loss


HIDDEN_CASES = {
    "step_times": tuple(
        Case(args=(strategy, SMALL, TPU, tokens)) for strategy, tokens in (("dp", 3e5), ("tp", 2e5), ("fsdp", 7e4))
    ),
    "critical_batch": tuple(Case(args=(strategy, SMALL, TPU)) for strategy in ("fsdp", "dp", "tp")),
    "fsdp_step": mlp_cases((("4:data", 8, 8, 16),), FSDP_LAYOUTS),
    "megatron_mlp": megatron_cases((("4:model", 8, 8, 32, "float32"), ("4x2:data,model", 4, 16, 32, "bfloat16"))),
    "dp_tp_step": mlp_cases((("4x2:data,model", 16, 8, 16),), TWO_D_LAYOUTS),
}


def _fsdp_bytes(case):
    """Sent per device per step: the weights gathered once (kept for the backward pass), the
    gradients reduce-scattered, and the loss all-reduced."""
    n = case.mesh_spec.axis_sizes["data"]
    h, d = case.shapes[0][1], case.shapes[1][1]  # w1's columns (h) and w2's (d) are not split
    weights = 2 * d * h * DTYPE_BYTES[case.dtype]
    return (n - 1) / n * (2 * weights + 2 * DTYPE_BYTES[case.dtype])


def _megatron_all_reduces(case):
    """One all-reduce forward (after the row-parallel layer); one more backward (the input's
    gradient, summed over the column-parallel layer's shards)."""
    return 2 if case.differentiate else 1


def _megatron_bytes(case):
    """Each all-reduce carries the batch x d_model activations (or their gradient) once."""
    n = case.mesh_spec.axis_sizes["model"]
    b, d = case.shapes[0]
    return _megatron_all_reduces(case) * 2 * (n - 1) / n * b * d * DTYPE_BYTES[case.dtype]


TARGETS = {
    "fsdp_step": Targets(comm_bytes=_fsdp_bytes),
    "megatron_mlp": Targets(comm_bytes=_megatron_bytes),
}
