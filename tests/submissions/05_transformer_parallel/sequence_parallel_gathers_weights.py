"""A "sequence-parallel" block that gathers the MLP's weights instead of the activations, runs the
whole MLP on its own rows, and adds a reduce-scatter of zeros so that the collectives the part
asks for appear: right values, but no tensor parallelism at all: every device holds and receives
the whole MLP, which the wide hidden case shows many times over, so it keeps the values alone."""

EXPECTED = {
    "sequence_parallel_block: technique": 0,
    "sequence_parallel_block: communication": 0,
}
REASONS = {
    "sequence_parallel_block: technique": "needs 3.01x the reference's memory per device at its peak",
    "sequence_parallel_block: communication": "not checked until the technique holds",
}


def sequence_parallel_block(x, gamma, w1, w2, axis_name):
    w1 = jax.lax.all_gather(w1, axis_name, axis=1, tiled=True)
    w2 = jax.lax.all_gather(w2, axis_name, axis=0, tiled=True)
    normed = (x - x.mean(axis=1, keepdims=True)) / jnp.sqrt(x.var(axis=1, keepdims=True) + EPS) * gamma
    out = x + jax.nn.relu(normed @ w1) @ w2
    zeros = jnp.zeros((x.shape[0] * jax.lax.axis_size(axis_name), x.shape[1]), x.dtype)
    return out + jax.lax.psum_scatter(zeros, axis_name, scatter_dimension=0, tiled=True)
