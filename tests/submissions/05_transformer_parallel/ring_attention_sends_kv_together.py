"""An honest ring attention spelled differently: k and v are stacked into one array and sent with
one ppermute a step, half the reference's operations for the same bytes. It is ring attention
(one block at a time, online softmax, neighbours only, overlapped) and keeps every point."""

HONEST = True
EXPECTED = {}
REASONS = {}


def ring_attention(q, k, v, axis_name, causal):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    block = q.shape[0]
    rows = me * block + jnp.arange(block)[:, None]
    q = q.astype(jnp.float32) * q.shape[-1] ** -0.5
    top = jnp.full((block, 1), -jnp.inf)
    total = jnp.zeros((block, 1))
    out = jnp.zeros(q.shape)
    kv = jnp.stack([k, v])  # one array, one ppermute a step
    for step in range(n):
        if step:
            kv = jax.lax.ppermute(kv, axis_name, [(j, (j + 1) % n) for j in range(n)])
        scores = q @ kv[0].astype(jnp.float32).T
        if causal:
            cols = (me - step) % n * block + jnp.arange(block)[None, :]
            scores = jnp.where(cols <= rows, scores, -jnp.inf)
        new_top = jnp.maximum(top, scores.max(axis=1, keepdims=True))
        weights = jnp.exp(scores - new_top)
        rescale = jnp.exp(top - new_top)
        total = rescale * total + weights.sum(axis=1, keepdims=True)
        out = rescale * out + weights @ kv[1].astype(jnp.float32)
        top = new_top
    return (out / total).astype(v.dtype)
