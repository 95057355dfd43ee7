"""Lecture 03 (three ways to parallelise): self-check exercises, judged against public oracles.

Both exercises are per-device functions for ``jax.shard_map``. The oracles reach the same values by
another route (an all-reduce then a slice, an all-gather then a mean), so they are stand-ins, not
copies of the answers.
"""

from __future__ import annotations

from typing import Any, cast

from ..core.tasks import Assignment, Case, Input, Layout, Task

COLUMNS = Layout((None, "AXIS"))  # (rows, columns): the columns split over the case's axis
ROWS = Layout(("AXIS", None))  # (rows, columns): the rows split over the case's axis
FLOAT = {"float32": (1e-5, 1e-5)}


def _axis_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis


def _scattered_rows_values(case: Case) -> float:
    # A reduce-scatter of the (batch, outputs) product: each device sends (N - 1)/N of it.
    n = _axis_size(case)
    batch, outputs = case.shapes[0][0], case.shapes[1][1]
    return (n - 1) / n * batch * outputs


def _global_mean_values(case: Case) -> float:
    # One number all-reduced: 2 (N - 1)/N values per device.
    n = _axis_size(case)
    return 2 * (n - 1) / n


def _scattered_rows_oracle(x: Any, w: Any, axis_name: str) -> Any:
    import jax

    full = jax.lax.psum(x @ w, axis_name)
    rows = full.shape[0] // jax.lax.axis_size(axis_name)
    return jax.lax.dynamic_slice_in_dim(full, jax.lax.axis_index(axis_name) * rows, rows, axis=0)


def _global_mean_oracle(x: Any, axis_name: str) -> Any:
    import jax

    return x - jax.lax.all_gather(x, axis_name, tiled=True).mean()


EXERCISES = Assignment(
    name="lecture 03_three_ways_to_parallelise",
    notebook="03_three_ways_to_parallelise.ipynb",
    solutions="",
    tasks=(
        Task(
            name="matmul_scattered_rows",
            grade_id="matmul_scattered_rows",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((8, 2), (2, 3)), "float32"),
                Case("2x4:x,y", "y", ((4, 3), (3, 5)), "float32"),
            ),
            inputs=(Input(COLUMNS), Input(ROWS)),
            out_layout=ROWS,
            tolerance=FLOAT,
            allowed=frozenset({"psum_scatter"}),
            required=frozenset({"psum_scatter"}),
            comm_bound=_scattered_rows_values,
            oracle=_scattered_rows_oracle,
        ),
        Task(
            name="subtract_global_mean",
            grade_id="subtract_global_mean",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((4, 3),), "float32"),
                Case("2x4:x,y", "y", ((2, 5),), "float32"),
            ),
            inputs=(Input(ROWS),),
            out_layout=ROWS,
            tolerance=FLOAT,
            allowed=frozenset({"psum"}),
            required=frozenset({"psum"}),
            comm_bound=_global_mean_values,
            oracle=_global_mean_oracle,
        ),
    ),
)
