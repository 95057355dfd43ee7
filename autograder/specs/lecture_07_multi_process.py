"""Self-check exercises of course/07_multi_process.ipynb: the arithmetic of many processes.

All three are plain Python, so they run in the student's single-process kernel. The oracles ask
JAX: a real mesh of the kernel's devices stands in for the processes (process ``p`` owns the
``p``-th contiguous run of the mesh's devices, as ``jax.make_mesh`` lays them out on CPUs), and
``NamedSharding.devices_indices_map`` says which elements those devices hold.
"""

from __future__ import annotations

from typing import Any

from ..core.tasks import Assignment, Case, Task


def _spec(*entries: Any) -> dict[str, list[Any]]:
    """A PartitionSpec argument, as plain data that the harness turns back into ``jax.P``."""
    return {"P": [list(e) if isinstance(e, tuple) else e for e in entries]}


def _mesh(mesh_shape: dict[str, int]) -> Any:
    from ..core.mesh import MeshSpec

    return MeshSpec(tuple(mesh_shape.values()), tuple(mesh_shape)).build()


def _process_rows_oracle(global_batch: int, process_index: int, process_count: int) -> list[int]:
    import jax

    # One device per process on a 1-D mesh: the block that device holds is the process's rows.
    mesh = _mesh({"processes": process_count})
    sharding = jax.NamedSharding(mesh, jax.P("processes"))
    try:
        sharding.shard_shape((global_batch,))
    except ValueError as err:  # JAX raises a subclass; the exercise asks for ValueError itself
        raise ValueError(str(err)) from None
    rows = sharding.devices_indices_map((global_batch,))[mesh.devices.flat[process_index]][0]
    return [rows.start or 0, global_batch if rows.stop is None else rows.stop]


def _shared_step_count_oracle(examples_per_process: list[int], local_batch: int) -> int:
    import numpy as np

    return int(np.min(np.asarray(examples_per_process) // local_batch))


def _process_local_shape_oracle(
    global_shape: list[int], spec: Any, mesh_shape: dict[str, int], process_count: int
) -> list[int]:
    import jax

    mesh = _mesh(mesh_shape)
    blocks = jax.NamedSharding(mesh, spec).devices_indices_map(tuple(global_shape))
    mine = list(mesh.devices.flat)[: mesh.size // process_count]  # process 0's devices
    shape = []
    for dim, size in enumerate(global_shape):
        distinct = {blocks[d][dim].indices(size) for d in mine}
        shape.append(sum(len(range(*s)) for s in distinct))
    return shape


PROCESS_ROWS_CASES = tuple(
    Case(args=args)
    for args in (
        (16, 0, 2),
        (16, 1, 2),
        (24, 2, 4),
        (64, 7, 8),
        (8, 0, 1),  # one process holds everything
        (10, 1, 4),  # 10 rows for 4 processes: ValueError
    )
)

SHARED_STEP_CASES = tuple(
    Case(args=args)
    for args in (
        ([96, 96], 32),
        ([100, 90, 95, 64], 16),
        ([33, 65, 47], 8),
        ([10, 50], 16),  # one process cannot fill a single batch
        ([64], 8),
    )
)

PROCESS_LOCAL_SHAPE_CASES = tuple(
    Case(args=args)
    for args in (
        ([16, 8], _spec("data", None), {"data": 8}, 2),
        ([16, 8], _spec("data", "model"), {"data": 2, "model": 4}, 2),
        ([16, 8], _spec("data", "model"), {"model": 2, "data": 4}, 2),  # every process: all rows
        ([16, 8], _spec(None, "model"), {"data": 4, "model": 2}, 2),
        ([32, 4], _spec(("data", "model"), None), {"data": 2, "model": 4}, 4),
        ([8, 8, 3], _spec("a", "c", None), {"a": 2, "b": 2, "c": 2}, 4),
        ([16, 8], _spec("data", "model"), {"data": 2, "model": 4}, 1),  # one process
        ([16, 8], _spec("data", "model"), {"data": 2, "model": 4}, 8),  # one device per process
    )
)

EXERCISES = Assignment(
    name="lecture 07_multi_process",
    notebook="07_multi_process.ipynb",
    solutions="",
    tasks=(
        Task(
            name="process_rows",
            grade_id="test_process_rows",
            kind="python",
            points={"values": 1.0},
            cases=PROCESS_ROWS_CASES,
            oracle=_process_rows_oracle,
        ),
        Task(
            name="shared_step_count",
            grade_id="test_shared_step_count",
            kind="python",
            points={"values": 1.0},
            cases=SHARED_STEP_CASES,
            oracle=_shared_step_count_oracle,
        ),
        Task(
            name="process_local_shape",
            grade_id="test_process_local_shape",
            kind="python",
            points={"values": 1.0},
            cases=PROCESS_LOCAL_SHAPE_CASES,
            oracle=_process_local_shape_oracle,
        ),
    ),
)
