"""The column-parallel layer gathers what it is given, every device's block of w1's columns, so
that each device computes the whole hidden activation, and then keeps its own columns of it for
the row-parallel layer: right values, but an all-gather the block does not need (so its traffic is
not judged), here and in the DP x TP step built on it."""

EXPECTED = {
    "megatron_mlp: technique": 0,
    "megatron_mlp: communication": 0,
    "dp_tp_step: technique": 0,
    "dp_tp_step: memory": 0,
}
REASONS = {
    "megatron_mlp: technique": "the compiled HLO contains all-gather",
    "megatron_mlp: communication": "not checked until the technique holds",
    "dp_tp_step: technique": "the compiled HLO runs all-gather",
    "dp_tp_step: memory": "not checked until the technique holds",
}


def megatron_mlp(x, w1, w2, axis_name):
    whole = jax.lax.all_gather(w1, axis_name, axis=1, tiled=True)
    h = jax.nn.relu(x @ whole)
    me, width = jax.lax.axis_index(axis_name), w1.shape[1]
    mine = jax.lax.dynamic_slice_in_dim(h, me * width, width, axis=1)
    return jax.lax.psum(mine @ w2, axis_name)
