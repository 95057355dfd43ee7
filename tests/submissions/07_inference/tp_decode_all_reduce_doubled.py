"""The tensor-parallel decode step all-reduces each block's output, then all-reduces the residual
stream once more after each block "so that the devices agree" (dividing by their number): the
same values, four all-reduces of the (batch, d_model) activations per layer where two do. It
sends twice the reference's bytes, past the technique's bound: no technique, no communication."""

EXPECTED = {"tp_decode_step: technique": 0, "tp_decode_step: communication": 0}
REASONS = {
    "tp_decode_step: technique": "sends 2.00x the reference's bytes",
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
        n = jax.lax.axis_size("model")
        h = jax.lax.psum(jax.lax.pcast(h, "model", to="varying"), "model") / n  # agree
        out = h + jax.lax.psum(jax.nn.relu(h @ params["w1"]) @ params["w2"], "model")
        return cache, jax.lax.psum(jax.lax.pcast(out, "model", to="varying"), "model") / n  # agree

    heads = jax.P(None, "model")
    specs = {"wq": heads, "wk": heads, "wv": heads, "wo": jax.P("model"), "w1": heads, "w2": jax.P("model")}
    cached = {"k": heads, "v": heads}
    step = jax.shard_map(local, in_specs=(specs, cached, jax.P(), jax.P()), out_specs=(cached, jax.P()))
    return jax.jit(step, donate_argnums=1)(params, cache, x, pos)
