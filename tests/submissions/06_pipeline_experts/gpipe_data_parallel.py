"""Data parallelism with the weights passed round instead of a pipeline: each device takes its own
share of the micro-batches through every stage, the stages' weights travelling the ring of
neighbours, then the outputs go round the ring to every device. Only ppermutes to neighbours,
right values and fewer FLOPs than a pipeline; but it moves and holds every stage's weights, which
the hidden case whose stages outweigh their micro-batches shows many times over: it is FSDP, not
GPipe, and keeps the values alone."""

EXPECTED = {
    "gpipe: technique": 0,
    "gpipe: communication": 0,
}
REASONS = {
    "gpipe: technique": "needs 2.09x the reference's memory per device at its peak",
    "gpipe: communication": "not checked until the technique holds",
}


def gpipe(weights, x, axis_name):
    stages, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    micro = x.shape[0]
    share = -(-micro // stages)  # micro-batches per device, the last devices' padded with zeros
    ring = [(j, (j + 1) % stages) for j in range(stages)]
    padded = jnp.concatenate([x, jnp.zeros((share * stages - micro, *x.shape[1:]), x.dtype)])
    h = jax.lax.dynamic_slice_in_dim(padded, me * share, share)
    held, w = [weights[0]], weights[0]
    for _ in range(stages - 1):
        w = jax.lax.ppermute(w, axis_name, ring)
        held.append(w)
    held = jnp.stack(held)
    for s in range(stages):
        h = stage(h, held[(me - s) % stages])
    outs, block = [h], h
    for _ in range(stages - 1):  # after s sends this device holds device me - s's outputs
        block = jax.lax.ppermute(block, axis_name, ring)
        outs.append(block)
    outs = jnp.stack(outs)
    return jnp.concatenate([outs[(me - d) % stages] for d in range(stages)])[:micro]
