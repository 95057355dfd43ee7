"""The layernorm divides zero by zero: NaNs everywhere, so every value check fails, and the
structure checks wait for right values."""

EXPECTED = {
    "sharded_layernorm: values": 0,
    "sharded_layernorm: hidden values": 0,
    "sharded_layernorm: technique": 0,
    "sharded_layernorm: communication": 0,
}
MESSAGE_OF = {
    "sharded_layernorm: values": "wrong values on 8 of 8 devices",
    "sharded_layernorm: hidden values": "wrong values on 8 of 8 devices",
    "sharded_layernorm: technique": "not checked until the values are right on at least one case",
    "sharded_layernorm: communication": "not checked until the values are right on at least one case",
}


def sharded_layernorm(x, axis_name, eps=1e-5):
    zero = jax.lax.psum(jnp.zeros(x.shape[:1] + (1,), jnp.float32), axis_name)
    return (x.astype(jnp.float32) * (zero / zero)).astype(x.dtype)
