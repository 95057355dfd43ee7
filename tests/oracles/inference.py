"""Independent stand-ins for inference's references, written another way: the decode steps as one
device's plain ``jax.numpy`` on whole arrays (every key/value head repeated for its query heads, as
multi-head attention; the new token written with a one-hot mask), left to the compiler to split
over the mesh; split decoding from the gathered cache; the cost model by counting each layer's
arrays; the plan by ranking every split of the chips. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _layer(params: Any, cache: Any, x: Any, pos: Any) -> tuple[Any, Any]:
    """One device's decode step on whole arrays: the caches written, then plain attention."""
    import jax
    import jax.numpy as jnp

    heads, width = params["wq"].shape[1:]
    repeat = heads // params["wk"].shape[1]
    t = cache["k"].shape[2]
    here = (jnp.arange(t)[None, :] == pos[:, None])[:, None, :, None]  # (B, 1, T, 1): the new token's slot
    new_k = jnp.where(here, jnp.einsum("bd,dgk->bgk", x, params["wk"])[:, :, None], cache["k"])
    new_v = jnp.where(here, jnp.einsum("bd,dgk->bgk", x, params["wv"])[:, :, None], cache["v"])
    q = jnp.einsum("bd,dhk->bhk", x, params["wq"])
    keys, values = (jnp.repeat(a, repeat, axis=1) for a in (new_k, new_v))  # (B, H, T, K)
    scores = jnp.einsum("bhk,bhtk->bht", q, keys) / jnp.sqrt(float(width))
    scores = jnp.where(jnp.arange(t)[None, None, :] > pos[:, None, None], -jnp.inf, scores)
    out = jnp.einsum("bht,bhtk->bhk", jax.nn.softmax(scores, axis=-1), values)
    h = x + jnp.einsum("bhk,hkd->bd", out, params["wo"])
    return {"k": new_k, "v": new_v}, h + jnp.maximum(h @ params["w1"], 0.0) @ params["w2"]


def _step_oracle(params: Any, cache: Any, x: Any, pos: Any) -> tuple[Any, Any]:
    """The step on whole arrays, every argument gathered onto every device first, the cache put
    back where it came from."""
    import jax

    def whole(params: Any, cache: Any, x: Any, pos: Any) -> tuple[Any, Any]:
        spec = jax.typeof(cache["k"]).sharding.spec
        gathered = jax.tree.map(lambda a: jax.reshard(a, jax.P()), (params, cache, x, pos))
        new_cache, out = _layer(*gathered)
        return jax.tree.map(lambda a: jax.reshard(a, spec), new_cache), out

    return jax.jit(whole)(params, cache, x, pos)


def _split_oracle(q: Any, k: Any, v: Any, pos: Any, axis_name: str) -> Any:
    """The whole cache gathered on every device, then plain attention."""
    import jax
    import jax.numpy as jnp

    whole_k, whole_v = (jax.lax.all_gather(a, axis_name, axis=2, tiled=True, to="invarying") for a in (k, v))
    repeat = q.shape[1] // k.shape[1]
    keys, values = (jnp.repeat(a.astype(jnp.float32), repeat, axis=1) for a in (whole_k, whole_v))
    scores = jnp.einsum("bhk,bhtk->bht", q.astype(jnp.float32), keys) / jnp.sqrt(float(q.shape[-1]))
    scores = jnp.where(jnp.arange(keys.shape[2])[None, None, :] > pos[:, None, None], -jnp.inf, scores)
    return jnp.einsum("bht,bhtk->bhk", jax.nn.softmax(scores, axis=-1), values).astype(q.dtype)


def _cache_bytes_oracle(model: dict, batch: int, context: int) -> float:
    per_layer = [("k", model["kv_heads"] * model["head_dim"]), ("v", model["kv_heads"] * model["head_dim"])]
    return sum(size for _, size in per_layer) * model["bytes"] * batch * context * model["layers"]


def _decode_time_oracle(model: dict, hardware: dict, batch: int, context: int, chips: int) -> float:
    weights = model["params"] * model["bytes"] / chips
    cache = _cache_bytes_oracle(model, batch, context) / chips
    matmuls = 2 * model["params"] * batch / chips
    attention = 4 * model["heads"] * model["head_dim"] * context * model["layers"] * batch / chips
    step = max((matmuls + attention) / hardware["flops"], (weights + cache) / hardware["hbm"])
    all_reduce = 2 * (chips - 1) / chips * batch * model["d_model"] * model["bytes"] / hardware["link"]
    return step + 2 * model["layers"] * all_reduce


def _plan_oracle(model: dict, hardware: dict, chips: int, batch: int, context: int, latency: float) -> tuple:
    plans = []
    for replicas in range(chips, 0, -1):
        tp = chips // replicas
        if tp * replicas != chips or model["kv_heads"] % tp:
            continue
        memory = (model["params"] * model["bytes"] + _cache_bytes_oracle(model, batch, context)) / tp
        time = _decode_time_oracle(model, hardware, batch, context, tp)
        if memory <= hardware["memory"] and time <= latency:
            plans.append((replicas * batch / time, tp, replicas))
    if not plans:
        raise ValueError("nothing fits")
    _, tp, replicas = max(plans)
    return tp, replicas


ORACLES = {
    "cache_bytes": _cache_bytes_oracle,
    "decode_time": _decode_time_oracle,
    "tp_decode_step": _step_oracle,
    "split_cache_decode": _split_oracle,
    "plan_serving": _plan_oracle,
    "fixed_decode_step": _step_oracle,
}
