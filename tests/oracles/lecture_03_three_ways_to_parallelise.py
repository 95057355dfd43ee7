"""Independent stand-ins for lecture_03_three_ways_to_parallelise's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _argmax_oracle(logits: Any, axis_name: str) -> Any:
    import jax
    import jax.numpy as jnp

    every_class = jax.lax.all_gather(logits, axis_name, axis=1, tiled=True, to="invarying")
    return jnp.argmax(every_class, axis=1).astype(jnp.int32)


def _global_mean_oracle(x: Any, axis_name: str) -> Any:
    import jax

    return x - jax.lax.all_gather(x, axis_name, tiled=True).mean()


ORACLES = {
    "argmax_split_classes": _argmax_oracle,
    "subtract_global_mean": _global_mean_oracle,
}
