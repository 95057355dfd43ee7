"""An honest tensor-parallel decode step spelled another way: the new token's keys and values
projected together as one array (one einsum over wk and wv stacked), and each sequence's entry
written with dynamic_update_slice under vmap instead of an indexed update. Its cache is updated
in place (donated), it holds its own heads, and it all-reduces twice per layer: it keeps every
point."""

HONEST = True
EXPECTED = {}
REASONS = {}


def tp_decode_step(params, cache, x, pos):
    def local(params, cache, x, pos):
        heads, width = params["wq"].shape[1:]
        kv_heads = params["wk"].shape[1]
        q = jnp.einsum("bd,dhk->bhk", x, params["wq"])
        kv = jnp.einsum("bd,cdgk->bcgk", x, jnp.stack([params["wk"], params["wv"]]))  # keys and values as one array

        def per_sequence(stored, new, pos_b):
            return jax.lax.dynamic_update_slice(stored, new[:, None], (0, pos_b, 0))

        k, v = kv[:, 0], kv[:, 1]
        cache = {name: jax.vmap(per_sequence)(cache[name], new, pos) for name, new in (("k", k), ("v", v))}
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
    return jax.jit(step, donate_argnums=1)(params, cache, x, pos)
