"""Reference solutions for 05_transformer_parallel, the hidden cases the grader adds, and the
closed forms (TARGETS) of what ring attention and the sequence-parallel block send, how often the
ring sends, and what the explicit step holds.

Each function body here is the single source of the matching solution region in
assignments/source/05_transformer_parallel/05_transformer_parallel.ipynb (tests/specs/test_solutions_sync.py checks it).
"""

import jax
import jax.numpy as jnp

from autograder.core.tasks import DTYPE_BYTES, Case, Targets
from autograder.specs.given.transformer_parallel import (
    EPS,
    GPT,
    SMALL_GPT,
    attention_cases,
    block_cases,
    block_loss,
    sgd_momentum,
    step_cases,
)


def explicit_step(params, opt_state, batch):
    weights = {"w1": jax.P("data", "model"), "w2": jax.P("model", "data")}  # FSDP over data, TP over model
    rows = jax.P("data", None)

    def step(params, mu, batch):
        def loss_of(params):
            whole = {  # gather the FSDP rows (an all-gather over data); the TP split stays
                "w1": jax.reshard(params["w1"], jax.P(None, "model")),
                "w2": jax.reshard(params["w2"], jax.P("model", None)),
            }
            return block_loss(whole, batch["x"], batch["y"], out_sharding=rows)  # row-parallel: all-reduce over model

        # reshard's transpose sums each gradient over data and keeps this device's rows: a reduce-scatter in
        # principle; XLA:CPU runs one all-reduce of the gradients and the loss, then slices it
        loss, grads = jax.value_and_grad(loss_of)(params)
        params, mu = sgd_momentum(params, mu, grads)
        return params, mu, loss

    jitted = jax.jit(step, in_shardings=(weights, weights, rows), out_shardings=(weights, weights, jax.P()),
                     donate_argnums=(0, 1))  # the old state's buffers hold the new state
    params, mu, loss = jitted(params, opt_state["mu"], batch)
    return params, {"mu": mu}, loss


def ring_attention(q, k, v, axis_name, causal):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    block = q.shape[0]
    right = [(j, (j + 1) % n) for j in range(n)]  # blocks travel to the right: at step s I hold block me - s
    rows = me * block + jnp.arange(block)[:, None]  # the global positions of my queries
    q = q.astype(jnp.float32) * q.shape[-1] ** -0.5  # softmax statistics in float32, whatever the dtype
    top = jnp.full((block, 1), -jnp.inf)  # the running maximum of each query's scores
    total = jnp.zeros((block, 1))  # the running sum of exp(score - top)
    out = jnp.zeros(q.shape)  # the running sum of exp(score - top) * v
    for step in range(n):
        if step:
            k, v = jax.lax.ppermute((k, v), axis_name, right)
        scores = q @ k.astype(jnp.float32).T
        if causal:
            cols = (me - step) % n * block + jnp.arange(block)[None, :]
            scores = jnp.where(cols <= rows, scores, -jnp.inf)
        new_top = jnp.maximum(top, scores.max(axis=1, keepdims=True))  # finite: step 0 is my own block
        weights = jnp.exp(scores - new_top)
        rescale = jnp.exp(top - new_top)  # what the old sums were counted in, to the new maximum
        total = rescale * total + weights.sum(axis=1, keepdims=True)
        out = rescale * out + weights @ v.astype(jnp.float32)
        top = new_top
    return (out / total).astype(v.dtype)


def sequence_parallel_block(x, gamma, w1, w2, axis_name):
    mean = x.mean(axis=1, keepdims=True)
    normed = (x - mean) / jnp.sqrt(x.var(axis=1, keepdims=True) + EPS) * gamma  # my rows only: nothing sent
    whole = jax.lax.all_gather(normed, axis_name, axis=0, tiled=True)  # every row, for my columns of w1
    partial = jax.nn.relu(whole @ w1) @ w2  # every row's partial sum over my hidden units
    return x + jax.lax.psum_scatter(partial, axis_name, scatter_dimension=0, tiled=True)  # my rows, summed


def plan_split(model, batch, seq, hardware):
    n, b = hardware["devices"], model["bytes"]
    layers, d, f = model["layers"], model["d_model"], model["d_ff"]
    params = layers * (4 * d * d + 2 * d * f)  # attention's four d x d projections, the MLP's two d x f
    compute = 6 * params * batch * seq / (n * hardware["flops"])

    def cost(data, tp):
        state = params * (2 * b + 8) / n  # weights, gradients, two float32 moments: split over every device
        activations = layers * batch / data * seq * (d + (4 * d + f) / tp) * b  # the block's input whole over model
        fsdp = 3 * (data - 1) / data * params / tp * b  # gather forward, gather backward, reduce-scatter
        megatron = 4 * layers * 2 * (tp - 1) / tp * batch / data * seq * d * b  # 2 all-reduces forward, 2 backward
        return state + activations, compute + (fsdp + megatron) / hardware["bandwidth"]

    splits = [(data, n // data) for data in range(n, 0, -1) if n % data == 0]
    fits = [(data, tp, *cost(data, tp)) for data, tp in splits
            if batch % data == 0 and model["heads"] % tp == 0 and cost(data, tp)[0] <= hardware["memory"]]
    if not fits:
        raise ValueError("no split of the devices holds this model and batch")
    return min(fits, key=lambda plan: plan[3])  # the fastest; on a tie, the most data parallel


HIDDEN_CASES = {
    "explicit_step": step_cases((("4x2:data,model", 8, 8, 16),)),
    "ring_attention": attention_cases(
        (
            ("4x2:x,y", "x", 16, 4, "float32", False),
            # A sequence long enough that a device holding every block of keys, values or scores
            # needs 2.5x or more of the ring's memory.
            ("8:i", "i", 1024, 8, "bfloat16", True),
        )
    ),
    "sequence_parallel_block": block_cases(
        (
            ("4:i", "i", 8, 16, 256, "bfloat16", False),  # a wide MLP: gathering its weights shows
            ("4x2:x,y", "x", 16, 8, 16, "float32", True),
        )
    ),
    "plan_split": tuple(
        Case(args=(model, batch, seq, hardware))
        for model, batch, seq, hardware in (
            (SMALL_GPT, 64, 1024, {"devices": 16, "flops": 2e14, "bandwidth": 1e11, "memory": 16e9}),
            (GPT, 16, 4096, {"devices": 16, "flops": 2e14, "bandwidth": 1e11, "memory": 40e9}),
            (GPT, 4, 2048, {"devices": 4, "flops": 1e15, "bandwidth": 4.5e11, "memory": 24e9}),
            ({**SMALL_GPT, "heads": 12}, 4, 4096, {"devices": 8, "flops": 4e14, "bandwidth": 2e11, "memory": 40e9}),
        )
    ),
}


def _ring(case):
    return case.mesh_spec.axis_sizes[case.axis]


def _ring_bytes(case):
    """Each device sends its k and v blocks on, N - 1 times."""
    block, dim = case.shapes[1]
    return 2 * (_ring(case) - 1) * block * dim * DTYPE_BYTES[case.dtype]


def _block_bytes(case):
    """An all-gather and a reduce-scatter of the sequence x d_model activations, (N - 1) / N of
    them each; differentiated, the backward pass runs the pair again, transposed."""
    n = _ring(case)
    rows, d = case.shapes[0]
    passes = 2 if case.differentiate else 1
    return passes * 2 * (n - 1) * rows * d * DTYPE_BYTES[case.dtype]


TARGETS = {
    "ring_attention": Targets(comm_bytes=_ring_bytes),
    "sequence_parallel_block": Targets(comm_bytes=_block_bytes),
}
