"""A mixture of experts that sends every token to every expert and lets each expert work on all of
them, dropping past capacity only when the results come back: right values and only all-to-alls,
but each expert receives and multiplies every device's tokens where the part allows `capacity` of
them, several times the reference's bytes and FLOPs when the capacity is small: it keeps the
values alone."""

EXPECTED = {
    "moe_layer: technique": 0,
    "moe_layer: communication": 0,
}
REASONS = {
    "moe_layer: technique": "sends 8.00x the reference's bytes per device over 'i'",
    "moe_layer: communication": "not checked until the technique holds",
}


def moe_layer(x, router, experts, axis_name, capacity):
    logits = x @ router
    expert = jnp.argmax(logits, axis=1)
    gate = jnp.max(jax.nn.softmax(logits, axis=1), axis=1, keepdims=True)
    chosen = jax.nn.one_hot(expert, router.shape[1], dtype=x.dtype)
    slot = (jnp.cumsum(chosen, axis=0) - 1) * chosen
    kept = chosen * (slot < capacity)
    everyone = jax.lax.all_to_all(jnp.broadcast_to(x, (router.shape[1], *x.shape)), axis_name, 0, 0, tiled=True)
    back = jax.lax.all_to_all(everyone @ experts[0], axis_name, 0, 0, tiled=True)  # (experts, tokens, d)
    return x + gate * jnp.einsum("te,etd->td", kept, back)
