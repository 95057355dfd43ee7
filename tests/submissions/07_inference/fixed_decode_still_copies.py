"""Half a fix of part 5: the cache update no longer gathers (each device writes its own sequences'
entries), but the jit still donates nothing, so every call writes a new cache beside the old
one, both whole on the device at the step's peak (1.7x the reference's memory or more on these
cases). A serving step that copies its cache every token is the bug itself: no technique."""

EXPECTED = {"fixed_decode_step: technique": 0}
REASONS = {"fixed_decode_step: technique": "the reference's memory per device at its peak"}


def fixed_decode_step(params, cache, x, pos):
    def local(params, cache, x, pos):
        heads, width = params["wq"].shape[1:]
        kv_heads = params["wk"].shape[1]
        q = jnp.einsum("bd,dhk->bhk", x, params["wq"])
        k = jnp.einsum("bd,dgk->bgk", x, params["wk"])
        v = jnp.einsum("bd,dgk->bgk", x, params["wv"])
        rows = jnp.arange(x.shape[0])  # my own sequences: no other device's cache is needed
        cache = {"k": cache["k"].at[rows, :, pos].set(k), "v": cache["v"].at[rows, :, pos].set(v)}
        grouped = q.reshape(q.shape[0], kv_heads, heads // kv_heads, width).astype(jnp.float32)
        scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, cache["k"].astype(jnp.float32)) / width**0.5
        visible = jnp.arange(cache["k"].shape[2]) <= pos[:, None, None, None]
        weights = jax.nn.softmax(jnp.where(visible, scores, -jnp.inf), axis=-1)
        heads_out = jnp.einsum("bgrt,bgtk->bgrk", weights, cache["v"].astype(jnp.float32)).reshape(q.shape)
        h = x + jnp.einsum("bhk,hkd->bd", heads_out.astype(x.dtype), params["wo"])
        return cache, h + jax.nn.relu(h @ params["w1"]) @ params["w2"]

    rows = jax.P("data")
    step = jax.shard_map(local, in_specs=(jax.P(), rows, rows, rows), out_specs=(rows, rows))
    return jax.jit(step)(params, cache, x, pos)
