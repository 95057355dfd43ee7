"""Ring attention that keeps the running maximum but never rescales what it has summed so far:
each block's weights are exp(score - new maximum) while the sums before it still count in the old
maximum, so blocks seen before the maximum moved weigh too much. Every case is wrong, and what a
ring teaches is judged only on a ring that is right."""

EXPECTED = {
    "ring_attention: values": 0,
    "ring_attention: hidden values": 0,
    "ring_attention: technique": 0,
    "ring_attention: communication": 0,
}
REASONS = {
    "ring_attention: values": "differ",
    "ring_attention: hidden values": "differ",
    "ring_attention: technique": "not checked until the values are right on at least one case",
    "ring_attention: communication": "not checked until the values are right on at least one case",
}


def ring_attention(q, k, v, axis_name, causal):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    block = q.shape[0]
    right = [(j, (j + 1) % n) for j in range(n)]
    rows = me * block + jnp.arange(block)[:, None]
    q = q.astype(jnp.float32) * q.shape[-1] ** -0.5
    top, total, out = jnp.full((block, 1), -jnp.inf), jnp.zeros((block, 1)), jnp.zeros(q.shape)
    for step in range(n):
        if step:
            k, v = jax.lax.ppermute((k, v), axis_name, right)
        scores = q @ k.astype(jnp.float32).T
        if causal:
            cols = (me - step) % n * block + jnp.arange(block)[None, :]
            scores = jnp.where(cols <= rows, scores, -jnp.inf)
        top = jnp.maximum(top, scores.max(axis=1, keepdims=True))
        weights = jnp.exp(scores - top)
        total = total + weights.sum(axis=1, keepdims=True)
        out = out + weights @ v.astype(jnp.float32)
    return (out / total).astype(v.dtype)
