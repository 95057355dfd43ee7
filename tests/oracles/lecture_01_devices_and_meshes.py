"""Independent stand-ins for lecture_01_devices_and_meshes's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _axis_groups_oracle(device_ids: Any, axis_names: list[str], axis: str) -> Any:
    import numpy as np

    grid = np.asarray(device_ids)
    k = list(axis_names).index(axis)
    return np.moveaxis(grid, k, -1).reshape(-1, grid.shape[k]).tolist()


def _cross_process_axes_oracle(process_ids: Any, axis_names: list[str]) -> list[str]:
    import numpy as np

    grid = np.asarray(process_ids)
    crossing = []
    for k, name in enumerate(axis_names):
        rows = np.moveaxis(grid, k, -1).reshape(-1, grid.shape[k])
        if (rows != rows[:, :1]).any():
            crossing.append(name)
    return crossing


ORACLES = {
    "axis_groups": _axis_groups_oracle,
    "cross_process_axes": _cross_process_axes_oracle,
}
