"""Assignment 01_collectives: ring collectives, a sharded layernorm, per-device random keys.

The oracles are public stand-ins built on JAX's own collectives; they let a student's notebook
check itself without the reference solutions, which stay with the instructor.
"""

from __future__ import annotations

from math import prod
from typing import Any, cast

from ..core.tasks import FEATURES, REPLICATED, STACKED, Assignment, Case, Input, Task

RINGS = frozenset({"ppermute"})
EXACT = {"float32": (0.0, 0.0), "bfloat16": (0.0, 0.0), "int32": (0.0, 0.0)}

# Communication bounds count values sent per device (the wire may widen a type; values stay).


def _values(case: Case) -> int:
    return prod(case.shapes[0])


def _axis_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis


def _all_gather_values(case: Case) -> float:
    # Every device must receive the N-1 blocks it lacks; a ring sends as many as it receives.
    return (_axis_size(case) - 1) * _values(case)


def _reduce_scatter_values(case: Case) -> float:
    n = _axis_size(case)
    return (n - 1) / n * _values(case)


def _all_reduce_values(case: Case) -> float:
    return 2 * _reduce_scatter_values(case)


def _layernorm_values(case: Case) -> float:
    # Two statistics per row, all-reduced: 2 (N-1)/N of 2 x batch values.
    n = _axis_size(case)
    return 2 * (n - 1) / n * 2 * case.shapes[0][0]


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


def _ring_cases(shape_8: tuple[int, ...], shape_y: tuple[int, ...]) -> tuple[Case, ...]:
    return (
        Case("8:i", "i", (shape_8,), "float32"),
        Case("2x4:x,y", "y", (shape_y,), "int32"),
    )


RING_POINTS = {"values": 4.0, "hidden values": 2.0, "collectives": 2.0, "communication": 2.0}


def _spec(*entries: Any) -> dict[str, list[Any]]:
    """A PartitionSpec argument, as plain data the sandbox turns back into ``jax.P``."""
    return {"P": [list(e) if isinstance(e, tuple) else e for e in entries]}


LOCAL_SHAPE_CASES = tuple(
    Case(args=args)
    for args in (
        ([16, 4], _spec("i", None), {"i": 8}),
        ([8, 6], _spec(None, "y"), {"x": 2, "y": 3}),
        ([8, 6, 5], _spec(("x", "y"), None, None), {"x": 2, "y": 4}),
        ([12, 6], _spec("y", "x"), {"x": 2, "y": 4}),
        ([10, 3], _spec("x"), {"x": 4}),  # 10 rows over 4 devices: ValueError
    )
)

ASSIGNMENT = Assignment(
    name="01_collectives",
    notebook="01_collectives.ipynb",
    solutions="collectives",
    tasks=(
        Task(
            name="local_shape",
            grade_id="test_local_shape",
            kind="python",
            points={"values": 3.0, "hidden values": 2.0},
            cases=LOCAL_SHAPE_CASES,
            oracle=_local_shape_oracle,
        ),
        Task(
            name="ring_all_gather",
            grade_id="test_ring_all_gather",
            kind="shard_map",
            points=RING_POINTS,
            cases=_ring_cases((2, 3), (3, 4)),
            inputs=(Input(STACKED),),
            tolerance=EXACT,
            allowed=RINGS,
            required=RINGS,
            neighbours_only=True,
            comm_bound=_all_gather_values,
            oracle=_all_gather_oracle,
        ),
        Task(
            name="ring_reduce_scatter",
            grade_id="test_ring_reduce_scatter",
            kind="shard_map",
            points=RING_POINTS,
            cases=_ring_cases((16, 3), (8, 2)),
            inputs=(Input(STACKED, "small_int"),),
            tolerance=EXACT,
            allowed=RINGS,
            required=RINGS,
            neighbours_only=True,
            comm_bound=_reduce_scatter_values,
            oracle=_reduce_scatter_oracle,
        ),
        Task(
            name="ring_all_reduce",
            grade_id="test_ring_all_reduce",
            kind="shard_map",
            points=RING_POINTS,
            cases=_ring_cases((8, 5), (4, 3)),
            inputs=(Input(STACKED, "small_int"),),
            tolerance=EXACT,
            allowed=RINGS,
            required=RINGS,
            neighbours_only=True,
            comm_bound=_all_reduce_values,
            oracle=_all_reduce_oracle,
        ),
        Task(
            name="sharded_layernorm",
            grade_id="test_sharded_layernorm",
            kind="shard_map",
            points=RING_POINTS,
            cases=(
                Case("8:i", "i", ((4, 8),), "float32"),
                Case("2x4:x,y", "y", ((3, 5),), "float32"),
            ),
            inputs=(Input(FEATURES),),
            tolerance={"float32": (1e-5, 1e-5), "bfloat16": (2e-2, 2e-2)},
            allowed=frozenset({"psum"}),
            required=frozenset({"psum"}),
            comm_bound=_layernorm_values,
            oracle=_layernorm_oracle,
        ),
        Task(
            name="fold_rng_over_axis",
            grade_id="test_fold_rng_over_axis",
            kind="shard_map",
            points={"values": 2.0, "hidden values": 2.0, "collectives": 1.0},
            cases=(Case("8:i", "i", ((),), "key"), Case("2x4:x,y", "y", ((),), "key")),
            inputs=(Input(REPLICATED, "key"),),
            allowed=frozenset(),
            oracle=_fold_rng_oracle,
        ),
    ),
)
