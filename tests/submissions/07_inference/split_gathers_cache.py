"""Split decoding that rebuilds the whole cache on every device before attending: each device's
block placed in a zero cache of every position and summed over the axis with psum, the one
collective allowed, then plain attention over all of it. The values are right and only
all-reduces run, but it sends (N - 1)/N of the cache, a number that grows with the sequence,
and holds all of it: the technique is lost, and with it the communication part."""

EXPECTED = {"split_cache_decode: technique": 0, "split_cache_decode: communication": 0}
REASONS = {
    "split_cache_decode: technique": "the reference's bytes per device over 'i'",
    "split_cache_decode: communication": "not checked until the technique holds",
}
# At scale on 8 x H100 SXM it projects 37.9x the reference's time (JAX 0.10.2): at least 20x.
AT_SCALE = {"split_cache_decode": 20.0}


def split_cache_decode(q, k, v, pos, axis_name):
    b, heads, width = q.shape
    kv_heads, block = k.shape[1], k.shape[2]
    first = jax.lax.axis_index(axis_name) * block
    n = jax.lax.axis_size(axis_name)

    def whole(part):  # every position of the cache, on every device
        room = jnp.zeros((b, kv_heads, n * block, width), part.dtype)
        return jax.lax.psum(jax.lax.dynamic_update_slice(room, part, (0, 0, first, 0)), axis_name)

    k, v = whole(k), whole(v)
    grouped = q.reshape(b, kv_heads, heads // kv_heads, width).astype(jnp.float32)
    scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, k.astype(jnp.float32)) / width**0.5
    visible = jnp.arange(n * block) <= pos[:, None, None, None]
    e = jnp.exp(jnp.where(visible, scores, -jnp.inf) - jnp.where(visible, scores, -jnp.inf).max(axis=-1, keepdims=True))
    total = e.sum(axis=-1)
    out = jnp.einsum("bgrt,bgtk->bgrk", e, v.astype(jnp.float32))
    return (out / total[..., None]).reshape(b, heads, width).astype(q.dtype)
