"""Split decoding that masks one position too many: each query sees positions before `pos` but not
`pos` itself, its own token's key. Every case is wrong, and the technique is judged only on a
program that is right."""

EXPECTED = {
    "split_cache_decode: values": 0,
    "split_cache_decode: hidden values": 0,
    "split_cache_decode: technique": 0,
    "split_cache_decode: communication": 0,
}
REASONS = {
    "split_cache_decode: values": "differ",
    "split_cache_decode: hidden values": "differ",
    "split_cache_decode: technique": "not checked until the values are right on at least one case",
    "split_cache_decode: communication": "not checked until the values are right on at least one case",
}


def split_cache_decode(q, k, v, pos, axis_name):
    b, heads, width = q.shape
    kv_heads, block = k.shape[1], k.shape[2]
    first = jax.lax.axis_index(axis_name) * block
    grouped = q.reshape(b, kv_heads, heads // kv_heads, width).astype(jnp.float32)
    scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, k.astype(jnp.float32)) / width**0.5
    visible = first + jnp.arange(block) < pos[:, None, None, None]
    scores = jnp.where(visible, scores, -jnp.inf)
    top = jax.lax.pmax(scores.max(axis=-1, keepdims=True), axis_name)
    e = jnp.exp(scores - top)
    total = jax.lax.psum(e.sum(axis=-1), axis_name)
    out = jax.lax.psum(jnp.einsum("bgrt,bgtk->bgrk", e, v.astype(jnp.float32)), axis_name)
    return (out / total[..., None]).reshape(b, heads, width).astype(q.dtype)
