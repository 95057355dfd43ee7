"""A mixture of experts that all-gathers every device's tokens, lets its expert work on the ones
routed to it (with the same capacity per source device), and reduce-scatters the results back:
right values, but the collectives the part forbids in place of the two all-to-alls; its traffic
is not judged until the technique holds."""

EXPECTED = {
    "moe_layer: technique": 0,
    "moe_layer: communication": 0,
}
REASONS = {
    "moe_layer: technique": "the compiled HLO contains all-gather",
    "moe_layer: communication": "not checked until the technique holds",
}


def moe_layer(x, router, experts, axis_name, capacity):
    me, tokens = jax.lax.axis_index(axis_name), x.shape[0]
    everyone = jax.lax.all_gather(x, axis_name, axis=0, tiled=True)
    logits = everyone @ router
    expert = jnp.argmax(logits, axis=1)
    gate = jnp.max(jax.nn.softmax(logits, axis=1), axis=1, keepdims=True)
    chosen = jax.nn.one_hot(expert, router.shape[1]).reshape(-1, tokens, router.shape[1])
    place = (jnp.cumsum(chosen, axis=1) - 1).reshape(-1, router.shape[1])  # queues per source device
    kept = (expert == me) & (jnp.take_along_axis(place, expert[:, None], axis=1)[:, 0] < capacity)
    mine = jnp.where(kept[:, None], gate * (everyone @ experts[0]), 0.0)
    return x + jax.lax.psum_scatter(mine, axis_name, scatter_dimension=0, tiled=True)
