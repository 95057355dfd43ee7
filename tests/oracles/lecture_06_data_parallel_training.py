"""Independent stand-ins for lecture_06_data_parallel_training's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _data_parallel_gradient_oracle(w: Any, x: Any, y: Any, axis_name: str) -> Any:
    import jax
    import jax.numpy as jnp

    # Gather the whole batch on every device (wasteful, but plainly right) and differentiate.
    xs = jax.lax.all_gather(x, axis_name, tiled=True, to="invarying")
    ys = jax.lax.all_gather(y, axis_name, tiled=True, to="invarying")
    return jax.grad(lambda w: jnp.mean((xs @ w - ys) ** 2))(w)


def _accumulated_gradient_oracle(w: Any, x: Any, y: Any, axis_name: str, micro: int) -> Any:
    # Accumulating over equal micro-batches changes how the gradient is computed, not what it is.
    del micro
    return _data_parallel_gradient_oracle(w, x, y, axis_name)


ORACLES = {
    "data_parallel_gradient": _data_parallel_gradient_oracle,
    "accumulated_gradient": _accumulated_gradient_oracle,
}
