"""A layernorm that rebuilds its rows with the collective it is allowed: each device places its
columns in a zero row of full width and all-reduces it, so every device holds every row whole.
Only psum and right values; but it all-reduces the rows themselves, where a sharded layernorm
all-reduces two numbers per row: it keeps the values alone."""

EXPECTED = {
    "sharded_layernorm: technique": 0,
    "sharded_layernorm: communication": 0,
}
REASONS = {
    "sharded_layernorm: technique": "sends 32.00x the reference's bytes per device over 'i'",
    "sharded_layernorm: communication": "not checked until the technique holds",
}


def sharded_layernorm(x, axis_name, eps=1e-5):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    width = x.shape[1]
    wide = jnp.zeros((x.shape[0], width * n), jnp.float32)
    rows = jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(wide, x.astype(jnp.float32), me * width, axis=1), axis_name)
    mean = rows.mean(axis=1, keepdims=True)
    var = ((rows - mean) ** 2).mean(axis=1, keepdims=True)
    normed = (rows - mean) / jnp.sqrt(var + eps)
    return jax.lax.dynamic_slice_in_dim(normed, me * width, width, axis=1).astype(x.dtype)
