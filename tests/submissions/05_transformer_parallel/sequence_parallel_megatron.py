"""Megatron's block in sequence parallelism's clothes: it gathers the whole input x, normalises
every row, and spells Megatron's all-reduce as a reduce-scatter then an all-gather before taking
its own rows. Only the collectives the part allows, right values; but it sends 1.5x what sequence
parallelism sends (it gathers x as well as the output), so it keeps the values alone."""

EXPECTED = {
    "sequence_parallel_block: technique": 0,
    "sequence_parallel_block: communication": 0,
}
REASONS = {
    "sequence_parallel_block: technique": "sends 1.50x the reference's bytes per device over 'i'",
    "sequence_parallel_block: communication": "not checked until the technique holds",
}


def sequence_parallel_block(x, gamma, w1, w2, axis_name):
    rows = x.shape[0]
    x = jax.lax.all_gather(x, axis_name, axis=0, tiled=True)  # Megatron's input, whole on every device
    normed = (x - x.mean(axis=1, keepdims=True)) / jnp.sqrt(x.var(axis=1, keepdims=True) + EPS) * gamma
    partial = jax.nn.relu(normed @ w1) @ w2
    summed = jax.lax.psum_scatter(partial, axis_name, scatter_dimension=0, tiled=True)
    out = x + jax.lax.all_gather(summed, axis_name, axis=0, tiled=True)  # the all-reduce, as a pair
    return jax.lax.dynamic_slice_in_dim(out, jax.lax.axis_index(axis_name) * rows, rows)
