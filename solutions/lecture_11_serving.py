"""Worked answers to the self-check exercises of lecture 11_serving."""

import jax.numpy as jnp


def decode_intensity(batch, n_params, d_model, kv_heads, head_dim, cache_len):
    # Each sequence: 2 FLOPs per weight, and 4 d_model per cached position (its score and its
    # share of the weighted sum, over all query heads).
    flops = batch * (2 * n_params + 4 * d_model * cache_len)
    # The weights once for the whole batch; each sequence's keys and values once; 2 bytes each.
    moved = 2 * n_params + batch * 2 * kv_heads * head_dim * cache_len * 2
    return flops / moved


def two_chunk_attention(q, k, v):
    def partials(keys, values):
        scores = q @ keys.T / q.shape[-1] ** 0.5
        top = scores.max(axis=-1)
        e = jnp.exp(scores - top[:, None])
        return top, e.sum(axis=-1), e @ values

    half = k.shape[0] // 2
    m, s, o = (jnp.stack(both) for both in zip(partials(k[:half], v[:half]), partials(k[half:], v[half:])))
    scale = jnp.exp(m - m.max(axis=0))  # one max
    return (scale[..., None] * o).sum(axis=0) / (scale * s).sum(axis=0)[:, None]  # two sums
