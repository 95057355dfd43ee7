"""The tensor-parallel decode step is the reference's but for one word: its jit donates nothing,
so each call writes a new cache beside the old one, both whole on each device for a moment, as
lecture 11's measurement timed it (every token then copies the cache). Its values, collectives and
bytes are right, and what each device keeps after the call; at its peak a device needs about 1.7x
the reference's memory where the cache outweighs its weights, and a serving step that copies its
cache is not the technique: it loses the technique, and with it the communication part."""

EXPECTED = {
    "tp_decode_step: technique": 0,
    "tp_decode_step: communication": 0,
}
REASONS = {
    "tp_decode_step: technique": "donated cache (donate_argnums), never a second copy of it",
    "tp_decode_step: communication": "not checked until the technique holds",
}


def tp_decode_step(params, cache, x, pos):
    def local(params, cache, x, pos):
        heads, width = params["wq"].shape[1:]
        kv_heads = params["wk"].shape[1]
        q = jnp.einsum("bd,dhk->bhk", x, params["wq"])
        k = jnp.einsum("bd,dgk->bgk", x, params["wk"])
        v = jnp.einsum("bd,dgk->bgk", x, params["wv"])
        rows = jnp.arange(x.shape[0])
        cache = {"k": cache["k"].at[rows, :, pos].set(k), "v": cache["v"].at[rows, :, pos].set(v)}
        grouped = q.reshape(-1, kv_heads, heads // kv_heads, width).astype(jnp.float32)
        scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, cache["k"].astype(jnp.float32)) / width**0.5
        visible = jnp.arange(cache["k"].shape[2]) <= pos[:, None, None, None]
        weights = jax.nn.softmax(jnp.where(visible, scores, -jnp.inf), axis=-1)
        out = jnp.einsum("bgrt,bgtk->bgrk", weights, cache["v"].astype(jnp.float32)).reshape(q.shape)
        h = x + jax.lax.psum(jnp.einsum("bhk,hkd->bd", out.astype(x.dtype), params["wo"]), "model")
        return cache, h + jax.lax.psum(jax.nn.relu(h @ params["w1"]) @ params["w2"], "model")

    heads = jax.P(None, "model")
    specs = {"wq": heads, "wk": heads, "wv": heads, "wo": jax.P("model"), "w1": heads, "w2": jax.P("model")}
    cached = {"k": heads, "v": heads}
    step = jax.shard_map(local, in_specs=(specs, cached, jax.P(), jax.P()), out_specs=(cached, jax.P()))
    return jax.jit(step)(params, cache, x, pos)
