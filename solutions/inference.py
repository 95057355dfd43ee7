"""Reference solutions for 07_inference, the hidden cases the grader adds, and the closed forms
(TARGETS) of what the decode steps send.

Each function body here is the single source of the matching solution region in
assignments/source/07_inference/07_inference.ipynb (tests/specs/test_solutions_sync.py checks it).
"""

import jax
import jax.numpy as jnp

from autograder.core.tasks import DTYPE_BYTES, Case, Targets
from autograder.specs.given.inference import H200, LLAMA_70B, MISTRAL_7B, decode_cases, replica_cases, split_cases


def cache_bytes(model, batch, context):
    # A key and a value of kv_heads x head_dim for every layer, sequence and position.
    return 2 * model["layers"] * batch * context * model["kv_heads"] * model["head_dim"] * model["bytes"]


def decode_time(model, hardware, batch, context, chips):
    # Every weight and every cached key and value is read once per token, a chip's share on each chip.
    moved = model["params"] * model["bytes"] + cache_bytes(model, batch, context)
    flops = batch * (2 * model["params"] + 4 * model["layers"] * model["heads"] * model["head_dim"] * context)
    roofline = max(flops / hardware["flops"], moved / hardware["hbm"]) / chips
    # Two all-reduces a layer (attention, MLP) of the (batch, d_model) activations; a ring
    # all-reduce sends 2 (N - 1) / N of them from each chip, after the matmuls that make them.
    sent = model["layers"] * 2 * 2 * (chips - 1) / chips * batch * model["d_model"] * model["bytes"]
    return roofline + sent / hardware["link"]


def tp_decode_step(params, cache, x, pos):
    def local(params, cache, x, pos):
        heads, width = params["wq"].shape[1:]  # this device's query heads
        kv_heads = params["wk"].shape[1]  # and the key/value heads they read
        q = jnp.einsum("bd,dhk->bhk", x, params["wq"])
        k = jnp.einsum("bd,dgk->bgk", x, params["wk"])
        v = jnp.einsum("bd,dgk->bgk", x, params["wv"])
        rows = jnp.arange(x.shape[0])
        cache = {"k": cache["k"].at[rows, :, pos].set(k), "v": cache["v"].at[rows, :, pos].set(v)}  # in place
        grouped = q.reshape(-1, kv_heads, heads // kv_heads, width).astype(jnp.float32)
        scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, cache["k"].astype(jnp.float32)) / width**0.5
        visible = jnp.arange(cache["k"].shape[2]) <= pos[:, None, None, None]  # positions 0 to pos, the new one too
        weights = jax.nn.softmax(jnp.where(visible, scores, -jnp.inf), axis=-1)
        out = jnp.einsum("bgrt,bgtk->bgrk", weights, cache["v"].astype(jnp.float32)).reshape(q.shape)
        h = x + jax.lax.psum(jnp.einsum("bhk,hkd->bd", out.astype(x.dtype), params["wo"]), "model")  # all-reduce 1
        return cache, h + jax.lax.psum(jax.nn.relu(h @ params["w1"]) @ params["w2"], "model")  # all-reduce 2

    heads = jax.P(None, "model")
    specs = {"wq": heads, "wk": heads, "wv": heads, "wo": jax.P("model"), "w1": heads, "w2": jax.P("model")}
    cached = {"k": heads, "v": heads}
    step = jax.shard_map(local, in_specs=(specs, cached, jax.P(), jax.P()), out_specs=(cached, jax.P()))
    return jax.jit(step, donate_argnums=1)(params, cache, x, pos)  # the cache's buffers hold the new cache


def split_cache_decode(q, k, v, pos, axis_name):
    b, heads, width = q.shape
    kv_heads, block = k.shape[1], k.shape[2]
    first = jax.lax.axis_index(axis_name) * block  # the position of my block's first entry
    grouped = q.reshape(b, kv_heads, heads // kv_heads, width).astype(jnp.float32)
    scores = jnp.einsum("bgrk,bgtk->bgrt", grouped, k.astype(jnp.float32)) / width**0.5
    visible = first + jnp.arange(block) <= pos[:, None, None, None]
    scores = jnp.where(visible, scores, -jnp.inf)
    top = jax.lax.pmax(scores.max(axis=-1, keepdims=True), axis_name)  # finite: position 0 is always visible
    e = jnp.exp(scores - top)  # every block's exponentials against the one common maximum: nothing to rescale
    total = jax.lax.psum(e.sum(axis=-1), axis_name)
    out = jax.lax.psum(jnp.einsum("bgrt,bgtk->bgrk", e, v.astype(jnp.float32)), axis_name)
    return (out / total[..., None]).reshape(b, heads, width).astype(q.dtype)


def plan_serving(model, hardware, chips, batch, context, latency):
    # The fewest chips per replica that hold the weights and the replica's caches and meet the
    # latency: the most replicas, and so the most tokens a second (fewer all-reduces per token).
    for tp in range(1, chips + 1):
        if chips % tp or model["kv_heads"] % tp:
            continue
        held = (model["params"] * model["bytes"] + cache_bytes(model, batch, context)) / tp
        if held <= hardware["memory"] and decode_time(model, hardware, batch, context, tp) <= latency:
            return tp, chips // tp
    raise ValueError("no plan holds this model and batch within the latency")


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
    return jax.jit(step, donate_argnums=1)(params, cache, x, pos)  # donated: written in place


_SMALL = {"params": 1.1e9, "layers": 22, "d_model": 2048, "heads": 32, "kv_heads": 4, "head_dim": 64, "bytes": 2}
_MHA_FP32 = {**MISTRAL_7B, "kv_heads": 32, "bytes": 4}  # multi-head attention, in float32
_TPU = {"flops": 197e12, "hbm": 819e9, "link": 100e9, "memory": 16e9}

HIDDEN_CASES = {
    "cache_bytes": tuple(
        Case(args=args)
        for args in ((_SMALL, 3, 2048), (_MHA_FP32, 2, 1000), ({**LLAMA_70B, "kv_heads": 16}, 5, 4096), (_SMALL, 1, 1))
    ),
    "decode_time": tuple(
        Case(args=args)
        for args in (
            (_SMALL, _TPU, 64, 2048, 2),
            (_MHA_FP32, H200, 4, 4096, 8),
            (LLAMA_70B, H200, 256, 1024, 8),  # compute-bound: a large batch over a short context
            ({**MISTRAL_7B, "heads": 16, "kv_heads": 2}, _TPU, 3, 16384, 1),
            (_SMALL, H200, 1, 128, 4),
        )
    ),
    "tp_decode_step": decode_cases((("4x2:data,model", 3, 16, 4, 2, 8, 32, 64), ("2:model", 2, 8, 4, 2, 4, 16, 96))),
    "split_cache_decode": split_cases(
        (
            ("4x2:x,y", "x", 2, 8, 2, 8, 64, "float32"),
            ("8:i", "i", 2, 4, 1, 16, 256, "bfloat16"),
            ("4:i", "i", 5, 4, 2, 8, 512, "float32"),  # a long cache: gathering it shows
        )
    ),
    "plan_serving": tuple(
        Case(args=args)
        for args in (
            (MISTRAL_7B, H200, 8, 128, 8192, 0.01),
            (LLAMA_70B, H200, 8, 8, 4096, 0.02),
            (_SMALL, _TPU, 4, 16, 2048, 0.003),
            (_MHA_FP32, H200, 8, 4, 16384, 0.004),
            (LLAMA_70B, H200, 4, 64, 32768, 0.05),  # nothing fits: ValueError
        )
    ),
    "fixed_decode_step": replica_cases(
        (("4x2:data,model", 8, 16, 4, 2, 8, 32, 128), ("2:data", 4, 8, 4, 4, 4, 16, 64))
    ),
}


def _axis(case, name):
    return case.mesh_spec.axis_sizes[name]


def _tp_bytes(case):
    """Two ring all-reduces of the (B, D) activations: 2 (N - 1) / N of them each."""
    n = _axis(case, "model")
    b, d = case.shapes[8]
    return 2 * 2 * (n - 1) / n * b * d * DTYPE_BYTES[case.dtype]


def _split_bytes(case):
    """All-reduces of each query's maximum and sum of exponentials and its weighted sum of K
    values, in float32 whatever the cache's dtype."""
    n = _axis(case, case.axis)
    b, heads, width = case.shapes[0]
    return 2 * (n - 1) / n * b * heads * (width + 2) * 4


TARGETS = {
    "tp_decode_step": Targets(comm_bytes=_tp_bytes),
    "split_cache_decode": Targets(comm_bytes=_split_bytes),
}
