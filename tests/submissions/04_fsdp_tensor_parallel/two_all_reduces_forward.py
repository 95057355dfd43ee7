"""The Megatron block gathers the column-parallel layer's output with an all-reduce (each device
adds its hidden units into zeros) before the row-parallel layer: right values, but two
all-reduces in the forward pass where one will do, the first of the whole hidden activation (so
its traffic is not judged)."""

EXPECTED = {
    "megatron_mlp: collectives": 0,
    "megatron_mlp: communication": 0,
}
REASONS = {
    "megatron_mlp: collectives": "the compiled HLO runs all-reduce (psum) 2 times; megatron_mlp must run it 1 times on this mesh",
    "megatron_mlp: communication": "not checked until the collectives are right",
}


def megatron_mlp(x, w1, w2, axis_name):
    h = jax.nn.relu(x @ w1)
    me, width = jax.lax.axis_index(axis_name), h.shape[1]
    hidden = jnp.zeros((h.shape[0], width * jax.lax.axis_size(axis_name)), h.dtype)
    whole = jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(hidden, h, me * width, axis=1), axis_name)
    mine = jax.lax.dynamic_slice_in_dim(whole, me * width, width, axis=1)
    return jax.lax.psum(mine @ w2, axis_name)
