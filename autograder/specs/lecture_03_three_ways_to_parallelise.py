"""Lecture 03 (three ways to parallelise): self-check exercises, judged against public oracles.

Both exercises are per-device functions for ``jax.shard_map``. The oracles reach the same values by
another route (an all-gather of every class then an argmax, an all-gather then a mean), so they are
stand-ins, not copies of the answers.
"""

from __future__ import annotations

from typing import Any, cast

from ..core.tasks import REPLICATED, Assignment, Case, Input, Layout, Task

COLUMNS = Layout((None, "AXIS"))  # (rows, columns): the columns split over the case's axis
ROWS = Layout(("AXIS", None))  # (rows, columns): the rows split over the case's axis
FLOAT = {"float32": (1e-5, 1e-5)}
EXACT = {"float32": (0.0, 0.0)}


def _axis_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis


def _argmax_values(case: Case) -> float:
    # Two all-reduces of one number per row (the largest logit, then its index): 2 (N - 1)/N each.
    n = _axis_size(case)
    batch = case.shapes[0][0]
    return 2 * 2 * (n - 1) / n * batch


def _global_mean_values(case: Case) -> float:
    # One number all-reduced: 2 (N - 1)/N values per device.
    n = _axis_size(case)
    return 2 * (n - 1) / n


def _argmax_oracle(logits: Any, axis_name: str) -> Any:
    import jax
    import jax.numpy as jnp

    every_class = jax.lax.all_gather(logits, axis_name, axis=1, tiled=True, to="invarying")
    return jnp.argmax(every_class, axis=1).astype(jnp.int32)


def _global_mean_oracle(x: Any, axis_name: str) -> Any:
    import jax

    return x - jax.lax.all_gather(x, axis_name, tiled=True).mean()


EXERCISES = Assignment(
    name="lecture 03_three_ways_to_parallelise",
    notebook="03_three_ways_to_parallelise.ipynb",
    solutions="",
    tasks=(
        Task(
            name="argmax_split_classes",
            grade_id="argmax_split_classes",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((4, 3),), "float32"),
                Case("2x4:x,y", "y", ((5, 2),), "float32"),
            ),
            # Small integers as logits, so that rows tie across devices and the smallest index must win.
            inputs=(Input(COLUMNS, draw="small_int"),),
            out_layout=REPLICATED,  # the rows are split over no axis, so every device holds every row's answer
            tolerance=EXACT,  # keyed by the case's dtype; the int32 indices must match exactly
            allowed=frozenset({"psum"}),  # psum, pmax and pmin all compile to an all-reduce
            required=frozenset({"psum"}),
            comm_bound=_argmax_values,
            oracle=_argmax_oracle,
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
