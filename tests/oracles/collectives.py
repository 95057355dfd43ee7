"""Independent stand-ins for collectives's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _local_shape_oracle(global_shape: list[int], spec: Any, mesh_shape: dict[str, int]) -> tuple[int, ...]:
    import jax
    from jax.sharding import AbstractMesh, NamedSharding

    mesh = AbstractMesh(tuple(mesh_shape.values()), tuple(mesh_shape.keys()))
    try:
        return tuple(NamedSharding(mesh, jax.P(*spec)).shard_shape(tuple(global_shape)))
    except ValueError as err:  # JAX raises a subclass; the task asks for ValueError itself
        raise ValueError(str(err)) from None


def _all_gather_oracle(x: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.all_gather(x, axis_name, tiled=True)


def _reduce_scatter_oracle(x: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum_scatter(x, axis_name, tiled=True)


def _all_reduce_oracle(x: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum(x, axis_name)


def _layernorm_oracle(x: Any, axis_name: str, eps: float = 1e-5) -> Any:
    import jax
    import jax.numpy as jnp

    rows = jax.lax.all_gather(x.astype(jnp.float32), axis_name, axis=1, tiled=True)
    mean = rows.mean(axis=1, keepdims=True)
    var = ((rows - mean) ** 2).mean(axis=1, keepdims=True)
    full = (rows - mean) / jnp.sqrt(var + eps)
    width = x.shape[1]
    start = jax.lax.axis_index(axis_name) * width
    return jax.lax.dynamic_slice_in_dim(full, start, width, axis=1).astype(x.dtype)


def _fold_rng_oracle(key: Any, axis_name: str) -> Any:
    import jax

    return jax.random.fold_in(key, jax.lax.axis_index(axis_name))


ORACLES = {
    "local_shape": _local_shape_oracle,
    "ring_all_gather": _all_gather_oracle,
    "ring_reduce_scatter": _reduce_scatter_oracle,
    "ring_all_reduce": _all_reduce_oracle,
    "sharded_layernorm": _layernorm_oracle,
    "fold_rng_over_axis": _fold_rng_oracle,
}
