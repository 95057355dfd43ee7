"""Self-check exercises of course/02_sharded_arrays.ipynb: sharding arithmetic.

The oracles ask JAX itself: ``NamedSharding.devices_indices_map`` on a real mesh for which devices
hold which elements, before and after a change of layout. (The block shape alone is assignment
01's ``local_shape``, graded there; these practise where the blocks are.)
"""

from __future__ import annotations

from typing import Any

from ..core.tasks import Assignment, Case, Task


def _spec(*entries: Any) -> dict[str, list[Any]]:
    """A PartitionSpec argument, as plain data that the harness turns back into ``jax.P``."""
    return {"P": [list(e) if isinstance(e, tuple) else e for e in entries]}


def _sharding(spec: Any, mesh_shape: dict[str, int]) -> Any:
    """``NamedSharding(spec)`` on a real mesh of the first devices, with explicit axes."""
    import jax

    from ..core.mesh import MeshSpec

    mesh = MeshSpec(tuple(mesh_shape.values()), tuple(mesh_shape)).build()
    return jax.NamedSharding(mesh, spec)


def _elements_received_oracle(global_shape: list[int], before: Any, after: Any, mesh_shape: dict[str, int]) -> int:
    import numpy as np

    shape = tuple(global_shape)
    held = _sharding(before, mesh_shape).devices_indices_map(shape)
    wanted = _sharding(after, mesh_shape).devices_indices_map(shape)
    most = 0
    for device, index in wanted.items():
        missing = np.zeros(shape, bool)
        missing[index] = True
        missing[held[device]] = False
        most = max(most, int(missing.sum()))
    return most


def _replication_factor_oracle(spec: Any, mesh_shape: dict[str, int]) -> int:
    sharding = _sharding(spec, mesh_shape)
    size = sharding.mesh.size
    blocks = sharding.devices_indices_map((size,) * max(len(spec), 1))
    first = next(iter(blocks.values()))
    return sum(index == first for index in blocks.values())


def _coords_holding_element_oracle(
    global_shape: list[int], spec: Any, mesh_shape: dict[str, int], index: list[int]
) -> list[tuple[int, ...]]:
    import numpy as np

    sharding = _sharding(spec, mesh_shape)
    blocks = sharding.devices_indices_map(tuple(global_shape))
    grid = sharding.mesh.devices
    held = []
    for coords in np.ndindex(grid.shape):
        slices = blocks[grid[coords]]
        if all(s.start is None or s.start <= i < s.stop for s, i in zip(slices, index)):
            held.append(tuple(int(c) for c in coords))
    return held


MESH_2X4 = {"x": 2, "y": 4}

RESHARD_CASES = tuple(
    Case(args=args)
    for args in (
        ([8, 8], _spec("x", None), _spec(None, "y"), MESH_2X4),
        ([8, 8], _spec(("x", "y")), _spec(("y", "x")), MESH_2X4),
        ([8, 8], _spec(), _spec("x", "y"), MESH_2X4),
        ([8, 8], _spec("x", "y"), _spec(), MESH_2X4),
        ([16], _spec("x"), _spec("y"), MESH_2X4),
        ([8, 4], _spec("a", ("b", "c")), _spec(("c", "a"), "b"), {"a": 2, "b": 2, "c": 2}),
    )
)

REPLICATION_CASES = tuple(
    Case(args=args)
    for args in (
        (_spec("x"), MESH_2X4),
        (_spec(None, "y"), MESH_2X4),
        (_spec("x", "y"), MESH_2X4),
        (_spec(), MESH_2X4),
        (_spec(("x", "y")), MESH_2X4),
        (_spec("fsdp", "tensor"), {"data": 2, "fsdp": 2, "tensor": 2}),
        (_spec(None, "y"), {"x": 2, "y": 2, "z": 2}),
        (_spec(), {"i": 8}),
    )
)

COORDS_CASES = tuple(
    Case(args=args)
    for args in (
        ([8, 8], _spec("x", None), MESH_2X4, [5, 3]),
        ([8, 8], _spec("x", "y"), MESH_2X4, [5, 3]),
        ([8, 8], _spec("y", "x"), MESH_2X4, [5, 3]),
        ([8, 8], _spec(None, "y"), MESH_2X4, [0, 7]),
        ([16], _spec(("y", "x")), MESH_2X4, [11]),
        ([8, 8], _spec(), {"x": 2, "y": 2}, [0, 0]),
        ([4, 8], _spec("b", ("a", "c")), {"a": 2, "b": 2, "c": 2}, [3, 4]),
    )
)

EXERCISES = Assignment(
    name="lecture 02_sharded_arrays",
    notebook="02_sharded_arrays.ipynb",
    solutions="",
    tasks=(
        Task(
            name="replication_factor",
            grade_id="test_replication_factor",
            kind="python",
            points={"values": 1.0},
            cases=REPLICATION_CASES,
            oracle=_replication_factor_oracle,
        ),
        Task(
            name="coords_holding_element",
            grade_id="test_coords_holding_element",
            kind="python",
            points={"values": 1.0},
            cases=COORDS_CASES,
            oracle=_coords_holding_element_oracle,
        ),
        Task(
            name="elements_received",
            grade_id="test_elements_received",
            kind="python",
            points={"values": 1.0},
            cases=RESHARD_CASES,
            oracle=_elements_received_oracle,
        ),
    ),
)
