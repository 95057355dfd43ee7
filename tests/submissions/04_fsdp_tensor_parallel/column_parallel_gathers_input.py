"""The column-parallel layer gathers what it is given, every device's block of w1's columns, so
that each device computes the whole hidden activation, and then keeps its own columns of it for
the row-parallel layer: right values, but an all-gather the block does not need (so its traffic is
not judged), here and in the DP x TP step built on it."""

EXPECTED = {
    "megatron_mlp: collectives": 0,
    "megatron_mlp: communication": 0,
    "dp_tp_step: collectives": 0,
}
REASONS = {
    "dp_tp_step: collectives": "the compiled HLO runs all-gather (all_gather), reduce-scatter (psum_scatter) over 'model'",
    "megatron_mlp: collectives": "the compiled HLO contains all-gather (all_gather); megatron_mlp may use only psum",
    "megatron_mlp: communication": "not checked until the collectives are right",
}


def megatron_mlp(x, w1, w2, axis_name):
    whole = jax.lax.all_gather(w1, axis_name, axis=1, tiled=True)
    h = jax.nn.relu(x @ whole)
    me, width = jax.lax.axis_index(axis_name), w1.shape[1]
    mine = jax.lax.dynamic_slice_in_dim(h, me * width, width, axis=1)
    return jax.lax.psum(mine @ w2, axis_name)
