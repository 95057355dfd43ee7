"""Split decoding from the cache all-gathered over the axis: plain attention over every position on
every device. Its values are right; the compiled program runs an all-gather, which the part
does not allow, and sends what grows with the sequence: no technique, no communication."""

EXPECTED = {"split_cache_decode: technique": 0, "split_cache_decode: communication": 0}
REASONS = {
    "split_cache_decode: technique": "the compiled HLO contains all-gather",
    "split_cache_decode: communication": "not checked until the technique holds",
}
# At scale on 8 x H100 SXM it projects 18.3x the reference's time (JAX 0.10.2): at least 10x.
AT_SCALE = {"split_cache_decode": 10.0}


def split_cache_decode(q, k, v, pos, axis_name):
    b, heads, width = q.shape
    kv_heads, block = k.shape[1], k.shape[2]
    k, v = (jax.lax.all_gather(a, axis_name, axis=2, tiled=True, to="invarying") for a in (k, v))
    block, first = k.shape[2], 0
    grouped = q.reshape(b, kv_heads, heads // kv_heads, width).astype(jnp.float32)
    scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, k.astype(jnp.float32)) / width**0.5
    visible = first + jnp.arange(block) <= pos[:, None, None, None]
    scores = jnp.where(visible, scores, -jnp.inf)
    e = jnp.exp(scores - scores.max(axis=-1, keepdims=True))
    total = e.sum(axis=-1)
    out = jnp.einsum("bgrt,bgtk->bgrk", e, v.astype(jnp.float32))
    return (out / total[..., None]).reshape(b, heads, width).astype(q.dtype)
