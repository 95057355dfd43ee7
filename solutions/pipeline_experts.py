"""Reference solutions for 06_pipeline_experts, the hidden cases the grader adds, and the closed
forms (TARGETS) of how often the pipelines send and what they and the mixture of experts send.

Each function body here is the single source of the matching solution region in
assignments/source/06_pipeline_experts/06_pipeline_experts.ipynb (tests/specs/test_solutions_sync.py checks it).
"""

import jax
import jax.numpy as jnp

from autograder.core.tasks import DTYPE_BYTES, Case, Targets
from autograder.specs.given.pipeline_experts import moe_cases, pipeline_cases, stage


def gpipe(weights, x, axis_name):
    stages, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    micro = x.shape[0]
    right = [(j, j + 1) for j in range(stages - 1)]  # stage s hands its activation to stage s + 1
    h, outputs = jnp.zeros(x.shape[1:], x.dtype), jnp.zeros_like(x)
    for t in range(micro + stages - 1):  # stage s works on micro-batch t - s at step t
        if t:
            h = jax.lax.ppermute(h, axis_name, right)
        h = stage(jnp.where(me == 0, x[min(t, micro - 1)], h), weights[0])  # stage 0 reads the input
        if t >= stages - 1:  # the last stage finishes micro-batch t - (S - 1)
            outputs = jnp.where(me == stages - 1, outputs.at[t - stages + 1].set(h), outputs)
    for _ in range(stages - 1):  # the outputs go round the ring of neighbours to every device
        passed = jax.lax.ppermute(outputs, axis_name, [(j, (j + 1) % stages) for j in range(stages)])
        outputs = jnp.where(me == stages - 1, outputs, passed)
    return outputs


def bubble_fraction(stages, microbatches, chunks):
    # Each round but the last ends when device 0 has taken every micro-batch (M steps) and the
    # first one is back from device S - 1 (S steps), whichever comes later; the last round then
    # takes M + S - 1 steps, like GPipe's. A device works v M of them.
    steps = (chunks - 1) * max(microbatches, stages) + microbatches + stages - 1
    return (steps - chunks * microbatches) / steps


def moe_layer(x, router, experts, axis_name, capacity):
    logits = x @ router
    expert = jnp.argmax(logits, axis=1)  # top-1: expert e lives on device e
    gate = jnp.max(jax.nn.softmax(logits, axis=1), axis=1, keepdims=True)
    chosen = jax.nn.one_hot(expert, router.shape[1], dtype=x.dtype)  # (tokens, experts)
    slot = ((jnp.cumsum(chosen, axis=0) - 1) * chosen).astype(jnp.int32)  # each token's place in its expert's queue
    dispatch = chosen[:, :, None] * jax.nn.one_hot(slot, capacity, dtype=x.dtype)  # past capacity: no slot
    sent = jnp.einsum("tec,td->ecd", dispatch, x)  # (experts, capacity, d): what I send each expert
    mine = jax.lax.all_to_all(sent, axis_name, 0, 0, tiled=True)  # (sources, capacity, d): my expert's tokens
    back = jax.lax.all_to_all(mine @ experts[0], axis_name, 0, 0, tiled=True)  # my tokens, from each expert
    return x + gate * jnp.einsum("tec,ecd->td", dispatch, back)  # a dropped token keeps its residual


def fixed_pipeline(weights, x, axis_name):
    stages, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    micro = x.shape[0]
    right = [(j, j + 1) for j in range(stages - 1)]
    lag = me  # stage s starts s steps after stage 0, not one

    def work(t, h, outputs):
        h = stage(jnp.where(me == 0, x[jnp.minimum(t, micro - 1)], h), weights[0])
        done = (me == stages - 1) & (t - lag >= 0) & (t - lag < micro)
        slot = jnp.clip(t - lag, 0, micro - 1)
        return h, jnp.where(done, outputs.at[slot].set(h), outputs)

    def step(t, carry):
        h, outputs = carry
        return work(t, jax.lax.ppermute(h, axis_name, right), outputs)

    h, outputs = work(0, jnp.zeros(x.shape[1:], x.dtype), jnp.zeros_like(x))
    _, outputs = jax.lax.fori_loop(1, micro + stages - 1, step, (h, outputs))  # M + S - 1 steps, not M + 1
    for _ in range(stages - 1):
        passed = jax.lax.ppermute(outputs, axis_name, [(j, (j + 1) % stages) for j in range(stages)])
        outputs = jnp.where(me == stages - 1, outputs, passed)
    return outputs


HIDDEN_CASES = {
    "gpipe": pipeline_cases(
        (
            ("8:i", "i", 8, 2, 4, "bfloat16", False),
            ("4x2:x,y", "x", 5, 2, 8, "float32", False),
            ("4:i", "i", 2, 3, 8, "float32", True),
            ("8:i", "i", 8, 1, 64, "float32", False),  # a stage's weights outweigh its micro-batches
        )
    ),
    "bubble_fraction": tuple(
        Case(args=args) for args in ((4, 4, 4), (8, 32, 2), (16, 48, 3), (1, 5, 2), (3, 1, 1), (8, 3, 4), (6, 4, 2))
    ),
    "moe_layer": moe_cases(
        # An expert's weights outweigh the tokens it may take: moving experts, or every token, shows.
        (("4:i", "i", 12, 8, 12), ("4:i", "i", 12, 8, 2), ("4x2:x,y", "x", 8, 4, 3), ("8:i", "i", 16, 64, 2))
    ),
    "fixed_pipeline": pipeline_cases(
        (
            ("8:i", "i", 6, 2, 4, "float32", False),
            ("4x2:x,y", "x", 4, 2, 8, "bfloat16", False),
            ("4:i", "i", 3, 2, 8, "float32", True),
            ("8:i", "i", 8, 1, 64, "float32", False),
        )
    ),
}


def _stages(case):
    return case.mesh_spec.axis_sizes[case.axis]


def _passes(case):
    """Differentiated, each ppermute's transpose sends as much back: twice the forward's."""
    return 2 if case.differentiate else 1


def _pipeline_bytes(case):
    """Each hand-over sends one micro-batch's activation, each turn of the ring every output."""
    micro, rows, d = case.shapes[1]
    n = _stages(case)
    return _passes(case) * ((micro + n - 2) + (n - 1) * micro) * rows * d * DTYPE_BYTES[case.dtype]


def _moe_bytes(case):
    """Two all-to-alls of a (experts, capacity, d) buffer: each device keeps its own expert's
    slice and sends the other N - 1."""
    n, d = _stages(case), case.shapes[0][1]
    return 2 * (n - 1) * dict(case.kwargs)["capacity"] * d * DTYPE_BYTES[case.dtype]


PIPELINE = Targets(comm_bytes=_pipeline_bytes)
TARGETS = {"gpipe": PIPELINE, "moe_layer": Targets(comm_bytes=_moe_bytes), "fixed_pipeline": PIPELINE}
