"""Independent stand-ins for lecture_02_sharded_arrays's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _sharding(spec: Any, mesh_shape: dict[str, int]) -> Any:
    """``NamedSharding(spec)`` on a real mesh of the first devices, with explicit axes."""
    import jax

    from autograder.core.mesh import MeshSpec

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


ORACLES = {
    "replication_factor": _replication_factor_oracle,
    "coords_holding_element": _coords_holding_element_oracle,
    "elements_received": _elements_received_oracle,
}
