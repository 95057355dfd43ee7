"""A layernorm that returns float32 whatever it is given: the hidden bfloat16 case fails."""

EXPECTED = {
    "sharded_layernorm: hidden values": 0,
}
REASONS = {
    "sharded_layernorm: hidden values": "output dtype is float32, expected bfloat16",
}


def sharded_layernorm(x, axis_name, eps=1e-5):
    features = x.shape[1] * jax.lax.axis_size(axis_name)
    xf = x.astype(jnp.float32)
    mean = jax.lax.psum(xf.sum(axis=1, keepdims=True), axis_name) / features
    centred = xf - mean
    var = jax.lax.psum((centred**2).sum(axis=1, keepdims=True), axis_name) / features
    return centred * jax.lax.rsqrt(var + eps)
