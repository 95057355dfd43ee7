"""Independent stand-ins for lecture_09_transformer_parallelism's references, written another way
(counted from the mask, or on JAX's own collectives and softmax): tests/specs/test_oracles.py holds
the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _attention_flops_per_token_oracle(seq_len: int, d_model: int, causal: bool) -> float:
    import numpy as np

    # Count the visible (query, key) pairs in the mask itself; each costs a d-long dot product for
    # its score and a d-long scaled add into the output, 2 FLOPs per element each.
    visible = np.tril(np.ones((seq_len, seq_len), bool)) if causal else np.ones((seq_len, seq_len), bool)
    return float(visible.sum()) * 4 * d_model / seq_len


def _neighbour_attention_oracle(q: Any, k: Any, v: Any, axis_name: str) -> Any:
    import jax

    # Gather every block, pick this device's and its left neighbour's, and take one plain softmax
    # over both (plainly right, and costly).
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    all_k, all_v = (jax.lax.all_gather(a, axis_name) for a in (k, v))
    left = (me - 1) % n
    keys = jax.numpy.concatenate([k, all_k[left]])
    values = jax.numpy.concatenate([v, all_v[left]])
    return jax.nn.softmax(q @ keys.T / q.shape[-1] ** 0.5, axis=-1) @ values


ORACLES = {
    "attention_flops_per_token": _attention_flops_per_token_oracle,
    "neighbour_attention": _neighbour_attention_oracle,
}
