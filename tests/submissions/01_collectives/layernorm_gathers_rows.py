"""A layernorm that gathers the full rows: right values, but the all-gather it calls is forbidden
(and sends far more): it keeps its values' points alone, and its traffic is not judged."""

EXPECTED = {
    "sharded_layernorm: technique": 0,
    "sharded_layernorm: communication": 0,
}
REASONS = {
    "sharded_layernorm: technique": "the compiled HLO contains all-gather",
    "sharded_layernorm: communication": "not checked until the technique holds",
}


def sharded_layernorm(x, axis_name, eps=1e-5):
    rows = jax.lax.all_gather(x.astype(jnp.float32), axis_name, axis=1, tiled=True)
    mean = rows.mean(axis=1, keepdims=True)
    var = ((rows - mean) ** 2).mean(axis=1, keepdims=True)
    normed = (rows - mean) / jnp.sqrt(var + eps)
    start = jax.lax.axis_index(axis_name) * x.shape[1]
    return jax.lax.dynamic_slice_in_dim(normed, start, x.shape[1], axis=1).astype(x.dtype)
