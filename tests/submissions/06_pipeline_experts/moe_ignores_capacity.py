"""A mixture of experts whose buffers hold every token a device has, whatever the capacity: no
token is ever dropped. Right where the capacity is as large as the tokens (no expert can
overflow), wrong where it is small; its collectives and traffic, judged on the right cases, are
the reference's."""

EXPECTED = {
    "moe_layer: values": 0,
    "moe_layer: hidden values": 0,
}
REASONS = {
    "moe_layer: values": "capacity=2",
    "moe_layer: hidden values": "wrong values",
}


def moe_layer(x, router, experts, axis_name, capacity):
    logits = x @ router
    expert = jnp.argmax(logits, axis=1)
    gate = jnp.max(jax.nn.softmax(logits, axis=1), axis=1, keepdims=True)
    chosen = jax.nn.one_hot(expert, router.shape[1], dtype=x.dtype)
    slot = ((jnp.cumsum(chosen, axis=0) - 1) * chosen).astype(jnp.int32)
    dispatch = chosen[:, :, None] * jax.nn.one_hot(slot, x.shape[0], dtype=x.dtype)
    sent = jnp.einsum("tec,td->ecd", dispatch, x)
    mine = jax.lax.all_to_all(sent, axis_name, 0, 0, tiled=True)
    back = jax.lax.all_to_all(mine @ experts[0], axis_name, 0, 0, tiled=True)
    return x + gate * jnp.einsum("tec,ecd->td", dispatch, back)
