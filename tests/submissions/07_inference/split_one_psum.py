"""Honest split decoding with its combine written as one psum of stacked statistics: each block's
sum of exponentials and weighted values, against the common maximum, concatenated along the last
axis and all-reduced together, then split. The same bytes in one all-reduce fewer: every point."""

HONEST = True
EXPECTED = {}
REASONS = {}


def split_cache_decode(q, k, v, pos, axis_name):
    b, heads, width = q.shape
    kv_heads, block = k.shape[1], k.shape[2]
    first = jax.lax.axis_index(axis_name) * block
    grouped = q.reshape(b, kv_heads, heads // kv_heads, width).astype(jnp.float32)
    scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, k.astype(jnp.float32)) / width**0.5
    visible = first + jnp.arange(block) <= pos[:, None, None, None]
    scores = jnp.where(visible, scores, -jnp.inf)
    top = jax.lax.pmax(scores.max(axis=-1, keepdims=True), axis_name)
    e = jnp.exp(scores - top)
    stacked = jnp.concatenate(
        [jnp.einsum("bgrt,bgtk->bgrk", e, v.astype(jnp.float32)), e.sum(axis=-1, keepdims=True)], -1
    )
    summed = jax.lax.psum(stacked, axis_name)  # one all-reduce of the sums and the weighted values
    out, total = summed[..., :-1], summed[..., -1]
    return (out / total[..., None]).reshape(b, heads, width).astype(q.dtype)
