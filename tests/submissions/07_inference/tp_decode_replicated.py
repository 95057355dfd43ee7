"""The tensor-parallel decode step returns the cache whole on every device: each device's heads are
summed into a cache of every head over `model` (psum, the collective allowed) and the step's
out_specs keep it replicated. Its values are right, but each device now holds N times its share
of the cache, and building it sends (N - 1)/N of the cache, 129x the reference's bytes on the
visible case, which is what the technique names first: no technique, no communication."""

EXPECTED = {"tp_decode_step: technique": 0, "tp_decode_step: communication": 0}
REASONS = {
    "tp_decode_step: technique": "sends 129.00x the reference's bytes per device over 'model'",
    "tp_decode_step: communication": "not checked until the technique holds",
}
# At scale on 8 x H100 SXM it projects 37.8x the reference's time (JAX 0.10.2): at least 20x.
AT_SCALE = {"tp_decode_step": 20.0}


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
        me, n = jax.lax.axis_index("model"), jax.lax.axis_size("model")

        def whole(part):
            b, g, t, w = part.shape
            room = jnp.zeros((b, g * n, t, w), part.dtype)
            return jax.lax.psum(jax.lax.dynamic_update_slice(room, part, (0, me * g, 0, 0)), "model")

        cache = {name: whole(part) for name, part in cache.items()}
        return cache, h + jax.lax.psum(jax.nn.relu(h @ params["w1"]) @ params["w2"], "model")

    heads = jax.P(None, "model")
    specs = {"wq": heads, "wk": heads, "wv": heads, "wo": jax.P("model"), "w1": heads, "w2": jax.P("model")}
    cached = {"k": heads, "v": heads}
    step = jax.shard_map(local, in_specs=(specs, cached, jax.P(), jax.P()), out_specs=(jax.P(), jax.P()))
    return jax.jit(step, donate_argnums=1)(params, cache, x, pos)
