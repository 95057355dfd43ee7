"""Ring attention whose "ring" fetches block me - s straight from the device that holds it at step
s: an all-to-all spelled as ppermutes. The online softmax and the bytes are the reference's, but
the send of step s crosses up to N/2 links of the ring instead of one: not a ring, so it keeps the
values alone."""

EXPECTED = {
    "ring_attention: technique": 0,
    "ring_attention: communication": 0,
}
REASONS = {
    "ring_attention: technique": "sends to devices that are not its neighbours: a ppermute pair is 4 hops apart on the ring of 'i', so the 448 values it sends per device travel 1024 value-hops",
    "ring_attention: communication": "not checked until the technique holds",
}


def ring_attention(q, k, v, axis_name, causal):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    block = q.shape[0]
    rows = me * block + jnp.arange(block)[:, None]
    q = q.astype(jnp.float32) * q.shape[-1] ** -0.5
    top = jnp.full((block, 1), -jnp.inf)
    total = jnp.zeros((block, 1))
    out = jnp.zeros(q.shape)
    mine_k, mine_v = k, v
    for step in range(n):
        if step:
            k, v = jax.lax.ppermute((mine_k, mine_v), axis_name, [(j, (j + step) % n) for j in range(n)])
        scores = q @ k.astype(jnp.float32).T
        if causal:
            cols = (me - step) % n * block + jnp.arange(block)[None, :]
            scores = jnp.where(cols <= rows, scores, -jnp.inf)
        new_top = jnp.maximum(top, scores.max(axis=1, keepdims=True))
        weights = jnp.exp(scores - new_top)
        rescale = jnp.exp(top - new_top)
        total = rescale * total + weights.sum(axis=1, keepdims=True)
        out = rescale * out + weights @ v.astype(jnp.float32)
        top = new_top
    return (out / total).astype(v.dtype)
