"""What students of 07_inference are given: the decoder layer the decode steps serve (grouped-query
attention and an MLP), where each of its arrays and its key/value cache live, how the cases are
built, the models and machines the cost model meets, and the broken decode step of part 5. The
notebook imports these; the task spec (``specs/inference.py``) builds its cases from them.

The layer, for B sequences each writing one new token x (B, D) at its own position ``pos[b]``:
queries of H heads of width K, keys and values of G heads (query head h reads key/value head
h // (H / G)), the new keys and values written into the caches (B, G, T, K) at ``pos[b]``,
attention over positions 0 to ``pos[b]`` (softmax in float32), then ``h = x + attention @ wo``
and ``h + relu(h @ w1) @ w2``.
"""

from __future__ import annotations

from typing import Any

from ...core.mesh import MeshSpec
from ...core.tasks import REPLICATED, Case, Input, Layout

# Part 2, tensor parallelism over `model`: the heads (and their caches) split by heads, the MLP's
# hidden features split, the new tokens and their positions whole on every device.
BY_HEADS = Layout((None, "model", None))  # wq (D, H, K), wk and wv (D, G, K)
BY_ROWS = Layout(("model", None, None))  # wo (H, K, D)
COLUMNS = Layout((None, "model"))  # w1 (D, F)
ROWS = Layout(("model", None))  # w2 (F, D)
CACHE_BY_HEADS = Layout((None, "model", None, None))  # (B, G, T, K)
DECODE_PATHS = (
    "params/wq",
    "params/wk",
    "params/wv",
    "params/wo",
    "params/w1",
    "params/w2",
    "cache/k",
    "cache/v",
    "x",
    "pos",
)
TP_INPUTS = (
    Input(BY_HEADS),
    Input(BY_HEADS),
    Input(BY_HEADS),
    Input(BY_ROWS),
    Input(COLUMNS),
    Input(ROWS),
    Input(CACHE_BY_HEADS),
    Input(CACHE_BY_HEADS),
    Input(REPLICATED),
    Input(REPLICATED, "index", "int32", below=(6, 2)),  # a position in the cache: below T
)

# Part 3, the cache split over the sequence: the queries and positions whole, each device a block
# of positions of every sequence's keys and values.
CACHE_BY_POSITIONS = Layout((None, None, "AXIS", None))  # (B, G, T, K)
SPLIT_INPUTS = (
    Input(REPLICATED),
    Input(CACHE_BY_POSITIONS),
    Input(CACHE_BY_POSITIONS),
    Input(REPLICATED, "index", "int32", below=(1, 2)),
)

# Part 5, replicas over `data`: the weights whole on every device, the sequences (their caches,
# tokens and positions) split over `data`.
BY_SEQUENCE = Layout(("data",))
REPLICA_INPUTS = (
    *(Input(REPLICATED) for _ in range(6)),
    Input(BY_SEQUENCE),
    Input(BY_SEQUENCE),
    Input(BY_SEQUENCE),
    Input(BY_SEQUENCE, "index", "int32", below=(6, 2)),
)


def _layer_shapes(d: int, heads: int, kv_heads: int, width: int, ff: int) -> tuple[tuple[int, ...], ...]:
    """The layer's whole weights: wq, wk, wv, wo, w1, w2."""
    return ((d, heads, width), (d, kv_heads, width), (d, kv_heads, width), (heads, width, d), (d, ff), (ff, d))


def decode_cases(sizes: tuple[tuple[str, int, int, int, int, int, int, int], ...]) -> tuple[Case, ...]:
    """Part 2's cases from (mesh, batch, d_model, heads, kv_heads, head width, d_ff, positions T):
    per device, H/N query heads, G/N key/value heads and F/N hidden features of the MLP, with N
    the size of the mesh's `model` axis."""
    cases = []
    for mesh, b, d, h, g, k, f, t in sizes:
        n = MeshSpec.parse(mesh).axis_sizes["model"]
        wq, wk, wv, wo, w1, w2 = _layer_shapes(d, h // n, g // n, k, f // n)
        cache = (b, g // n, t, k)
        cases.append(Case(mesh, None, (wq, wk, wv, wo, w1, w2, cache, cache, (b, d), (b,))))
    return tuple(cases)


def split_cases(sizes: tuple[tuple[str, str, int, int, int, int, int, str], ...]) -> tuple[Case, ...]:
    """Part 3's cases from (mesh, axis, batch, heads, kv_heads, head width, positions T, dtype):
    each device holds T/N positions of every sequence's cache."""
    cases = []
    for mesh, axis, b, h, g, k, t, dtype in sizes:
        block = (b, g, t // MeshSpec.parse(mesh).axis_sizes[axis], k)
        cases.append(Case(mesh, axis, ((b, h, k), block, block, (b,)), dtype))
    return tuple(cases)


def replica_cases(sizes: tuple[tuple[str, int, int, int, int, int, int, int], ...]) -> tuple[Case, ...]:
    """Part 5's cases from (mesh, batch, d_model, heads, kv_heads, head width, d_ff, positions
    T): every weight whole, B/N sequences a device, with N the size of the mesh's `data` axis."""
    cases = []
    for mesh, b, d, h, g, k, f, t in sizes:
        mine = b // MeshSpec.parse(mesh).axis_sizes["data"]
        cache = (mine, g, t, k)
        cases.append(Case(mesh, None, (*_layer_shapes(d, h, g, k, f), cache, cache, (mine, d), (mine,))))
    return tuple(cases)


# Parts 1 and 4, the cost model and the serving plan: a model of `layers` layers of width
# `d_model`, `heads` query heads and `kv_heads` key/value heads of `head_dim`, `params` parameters,
# values of `bytes` bytes; chips of `flops` FLOP/s, `hbm` bytes/s of memory, `link` bytes/s of
# interconnect each way and `memory` bytes each.
MISTRAL_7B = {
    "params": 7.24e9,
    "layers": 32,
    "d_model": 4096,
    "heads": 32,
    "kv_heads": 8,
    "head_dim": 128,
    "bytes": 2,
}
LLAMA_70B = {
    "params": 70.6e9,
    "layers": 80,
    "d_model": 8192,
    "heads": 64,
    "kv_heads": 8,
    "head_dim": 128,
    "bytes": 2,
}
H200 = {"flops": 989.4e12, "hbm": 4.8e12, "link": 450e9, "memory": 141e9}


def broken_decode_step(params: Any, cache: Any, x: Any, pos: Any) -> Any:
    """Part 5's decode step as it was handed over: replicas over `data`, each device serving its
    own sequences with the whole layer. Its outputs are right."""
    import jax
    import jax.numpy as jnp

    def local(params: Any, cache: Any, x: Any, pos: Any) -> tuple[Any, Any]:
        heads, width = params["wq"].shape[1:]
        kv_heads = params["wk"].shape[1]
        q = jnp.einsum("bd,dhk->bhk", x, params["wq"])
        k = jnp.einsum("bd,dgk->bgk", x, params["wk"])
        v = jnp.einsum("bd,dgk->bgk", x, params["wv"])
        # Write the new keys and values where every device can see them: the whole batch's cache.
        rows = jax.lax.axis_index("data") * x.shape[0] + jnp.arange(x.shape[0])
        every_k = jax.lax.all_gather(cache["k"], "data", tiled=True)
        every_v = jax.lax.all_gather(cache["v"], "data", tiled=True)
        every_k = every_k.at[rows, :, pos].set(k)
        every_v = every_v.at[rows, :, pos].set(v)
        mine_k, mine_v = every_k[rows], every_v[rows]
        grouped = q.reshape(q.shape[0], kv_heads, heads // kv_heads, width).astype(jnp.float32)
        scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, mine_k.astype(jnp.float32)) / width**0.5
        visible = jnp.arange(mine_k.shape[2]) <= pos[:, None, None, None]
        weights = jax.nn.softmax(jnp.where(visible, scores, -jnp.inf), axis=-1)
        heads_out = jnp.einsum("bgrt,bgtk->bgrk", weights, mine_v.astype(jnp.float32)).reshape(q.shape)
        h = x + jnp.einsum("bhk,hkd->bd", heads_out.astype(x.dtype), params["wo"])
        return {"k": mine_k, "v": mine_v}, h + jax.nn.relu(h @ params["w1"]) @ params["w2"]

    rows = jax.P("data")
    step = jax.jit(jax.shard_map(local, in_specs=(jax.P(), rows, rows, rows), out_specs=(rows, rows)))
    return step(params, cache, x, pos)
