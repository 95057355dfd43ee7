"""The sequence-parallel block all-reduces the row-parallel layer's partial sums and keeps its own
rows of the total: right values, but an all-reduce sends twice what a reduce-scatter does, and
sequence parallelism is the pair all-gather and reduce-scatter; its traffic is not judged until
the technique holds."""

EXPECTED = {
    "sequence_parallel_block: technique": 0,
    "sequence_parallel_block: communication": 0,
}
REASONS = {
    "sequence_parallel_block: technique": "the compiled HLO contains all-reduce",
    "sequence_parallel_block: communication": "not checked until the technique holds",
}


def sequence_parallel_block(x, gamma, w1, w2, axis_name):
    normed = (x - x.mean(axis=1, keepdims=True)) / jnp.sqrt(x.var(axis=1, keepdims=True) + EPS) * gamma
    whole = jax.lax.all_gather(normed, axis_name, axis=0, tiled=True)
    total = jax.lax.psum(jax.nn.relu(whole @ w1) @ w2, axis_name)
    mine = jax.lax.dynamic_slice_in_dim(total, jax.lax.axis_index(axis_name) * x.shape[0], x.shape[0])
    return x + mine
