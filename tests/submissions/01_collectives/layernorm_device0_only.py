"""A layernorm whose result is right only on the first device along the axis (the others return
zeros): wrong values on every other device, and the structure checks wait for right values."""

EXPECTED = {
    "sharded_layernorm: values": 0,
    "sharded_layernorm: hidden values": 0,
    "sharded_layernorm: technique": 0,
    "sharded_layernorm: communication": 0,
}
REASONS = {
    "sharded_layernorm: values": "wrong values on 7 of 8 devices",
    "sharded_layernorm: hidden values": "wrong values on 6 of 8 devices",
    "sharded_layernorm: technique": "not checked until the values are right on at least one case",
    "sharded_layernorm: communication": "not checked until the values are right on at least one case",
}


def sharded_layernorm(x, axis_name, eps=1e-5):
    features = x.shape[1] * jax.lax.axis_size(axis_name)
    xf = x.astype(jnp.float32)
    mean = jax.lax.psum(xf.sum(axis=1, keepdims=True), axis_name) / features
    centred = xf - mean
    var = jax.lax.psum((centred**2).sum(axis=1, keepdims=True), axis_name) / features
    out = centred * jax.lax.rsqrt(var + eps)
    out = jnp.where(jax.lax.axis_index(axis_name) == 0, out, 0.0)
    return out.astype(x.dtype)
