"""Independent stand-ins for lecture_11_serving's references, written another way (the step's
work counted array by array, or JAX's own attention): tests/specs/test_oracles.py holds the
references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _decode_intensity_oracle(
    batch: int, n_params: int, d_model: int, kv_heads: int, head_dim: int, cache_len: int
) -> float:
    # Count what each sequence adds, one at a time: its FLOPs, and the bytes of its own keys and
    # values (bfloat16); the weights' bytes come once, whoever reads them.
    flops, moved = 0, n_params * 2
    for _ in range(batch):
        flops += n_params * 2  # a multiply and an add per weight
        flops += cache_len * d_model * 2 * 2  # scores and weighted sum, over every query head
        moved += cache_len * (kv_heads * head_dim) * 2 * 2  # keys and values, 2 bytes each
    return flops / moved


def _two_chunk_attention_oracle(q: Any, k: Any, v: Any) -> Any:
    import jax

    # JAX's own attention over all the positions at once: (batch, positions, heads, width).
    return jax.nn.dot_product_attention(q[None, :, None], k[None, :, None], v[None, :, None])[0, :, 0]


ORACLES = {
    "decode_intensity": _decode_intensity_oracle,
    "two_chunk_attention": _two_chunk_attention_oracle,
}
