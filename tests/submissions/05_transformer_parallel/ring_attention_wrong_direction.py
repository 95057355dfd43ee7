"""Ring attention that sends its blocks to the left but masks as though they travelled right: at
step s it holds block me + s, and it takes it for block me - s. Without a mask every block
counts the same, so the non-causal cases are right; with one, each query sees the wrong keys, so
every causal case is wrong, visible and hidden."""

EXPECTED = {
    "ring_attention: values": 0,
    "ring_attention: hidden values": 0,
}
REASONS = {
    "ring_attention: values": "causal=True",
    "ring_attention: hidden values": "differ",
}


def ring_attention(q, k, v, axis_name, causal):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    block = q.shape[0]
    left = [(j, (j - 1) % n) for j in range(n)]
    rows = me * block + jnp.arange(block)[:, None]
    q = q.astype(jnp.float32) * q.shape[-1] ** -0.5
    top, total, out = jnp.full((block, 1), -jnp.inf), jnp.zeros((block, 1)), jnp.zeros(q.shape)
    for step in range(n):
        if step:
            k, v = jax.lax.ppermute((k, v), axis_name, left)
        scores = q @ k.astype(jnp.float32).T
        if causal:
            cols = (me - step) % n * block + jnp.arange(block)[None, :]
            scores = jnp.where(cols <= rows, scores, -jnp.inf)
        new_top = jnp.maximum(top, scores.max(axis=1, keepdims=True))
        weights, rescale = jnp.exp(scores - new_top), jnp.exp(top - new_top)
        total = rescale * total + weights.sum(axis=1, keepdims=True)
        out = rescale * out + weights @ v.astype(jnp.float32)
        top = new_top
    return (out / total).astype(v.dtype)
