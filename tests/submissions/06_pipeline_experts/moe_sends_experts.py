"""Its all-to-all carries copies of the experts' weights, not tokens: every device receives every
expert and runs its own tokens through the one each is routed to, dropping past capacity as the
reference does. Right values and only the collective the part allows; but no token travels, and
where an expert's weights outweigh the tokens it may take, it sends and holds many times the
reference's: it keeps the values alone."""

EXPECTED = {
    "moe_layer: technique": 0,
    "moe_layer: communication": 0,
}
REASONS = {
    "moe_layer: technique": "sends 2.00x the reference's bytes per device over 'i'",
    "moe_layer: communication": "not checked until the technique holds",
}


def moe_layer(x, router, experts, axis_name, capacity):
    n = jax.lax.axis_size(axis_name)
    copies = jnp.broadcast_to(experts, (n, *experts.shape[1:]))  # my expert, once for every device
    everyone = jax.lax.all_to_all(copies, axis_name, 0, 0, tiled=True)  # (experts, d, d): all of them
    logits = x @ router
    expert = jnp.argmax(logits, axis=1)
    gate = jnp.max(jax.nn.softmax(logits, axis=1), axis=1, keepdims=True)
    chosen = jax.nn.one_hot(expert, router.shape[1], dtype=x.dtype)
    slot = (jnp.cumsum(chosen, axis=0) - 1) * chosen
    kept = (chosen * (slot < capacity)).sum(axis=1, keepdims=True)
    return x + gate * kept * jnp.einsum("td,tde->te", x, everyone[expert])
