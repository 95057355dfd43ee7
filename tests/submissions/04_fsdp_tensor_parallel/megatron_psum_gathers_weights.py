"""A Megatron block without tensor parallelism, spelled with the only collective it may run: each
device places its columns of w1 and rows of w2 in zeros of full size and all-reduces them, then
multiplies the whole MLP: right values and only all-reduces, but every device multiplies all of
it, N times the reference's FLOPs, and sends the weights, 16x the reference's bytes: it keeps the
values alone, here and in the DP x TP step built on it."""

EXPECTED = {
    "megatron_mlp: technique": 0,
    "megatron_mlp: communication": 0,
    "dp_tp_step: technique": 0,
    "dp_tp_step: memory": 0,
}
REASONS = {
    "megatron_mlp: technique": "sends 16.00x the reference's bytes per device over 'model'",
    "megatron_mlp: communication": "not checked until the technique holds",
    "dp_tp_step: technique": "runs 4.00x the reference's FLOPs per device",
    "dp_tp_step: memory": "not checked until the technique holds",
}


def megatron_mlp(x, w1, w2, axis_name):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    width = w1.shape[1]
    whole1 = jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(jnp.zeros((w1.shape[0], width * n), w1.dtype), w1, me * width, axis=1), axis_name)
    whole2 = jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(jnp.zeros((width * n, w2.shape[1]), w2.dtype), w2, me * width, axis=0), axis_name)
    return jax.nn.relu(x @ whole1) @ whole2
