"""Ring attention that all-gathers k and v and attends to the whole sequence at once: right
values, but the collective the ring replaces; its traffic is not judged until the technique
holds."""

EXPECTED = {
    "ring_attention: technique": 0,
    "ring_attention: communication": 0,
}
REASONS = {
    "ring_attention: technique": "the compiled HLO contains all-gather",
    "ring_attention: communication": "not checked until the technique holds",
}


def ring_attention(q, k, v, axis_name, causal):
    me, block = jax.lax.axis_index(axis_name), q.shape[0]
    k, v = (jax.lax.all_gather(a, axis_name, axis=0, tiled=True).astype(jnp.float32) for a in (k, v))
    scores = q.astype(jnp.float32) @ k.T * q.shape[-1] ** -0.5
    if causal:
        rows = me * block + jnp.arange(block)[:, None]
        scores = jnp.where(jnp.arange(k.shape[0])[None, :] <= rows, scores, -jnp.inf)
    return (jax.nn.softmax(scores, axis=1) @ v).astype(q.dtype)
