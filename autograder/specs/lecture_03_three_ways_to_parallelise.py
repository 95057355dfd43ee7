"""Lecture 03 (three ways to parallelise): self-check exercises, never graded.

Both exercises are per-device functions for ``jax.shard_map``, held to the least traffic their
collectives can send (the bounds live with the worked answers, in ``solutions/``).
"""

from __future__ import annotations

from typing import cast

from ..core.tasks import REPLICATED, Assignment, Case, Input, Layout, Task, least_traffic

COLUMNS = Layout((None, "AXIS"))  # (rows, columns): the columns split over the case's axis
ROWS = Layout(("AXIS", None))  # (rows, columns): the rows split over the case's axis
FLOAT = {"float32": (1e-5, 1e-5)}
EXACT = {"float32": (0.0, 0.0)}


def _axis_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis


EXERCISES = Assignment(
    name="lecture 03_three_ways_to_parallelise",
    notebook="03_three_ways_to_parallelise.ipynb",
    solutions="lecture_03_three_ways_to_parallelise",
    tasks=(
        Task(
            name="argmax_split_classes",
            grade_id="argmax_split_classes",
            kind="shard_map",
            points={"values": 1.0, "technique": 1.0, "communication": 1.0},
            bounds=least_traffic("each device all-reduces one best value and one index per row"),
            cases=(
                Case("8:i", "i", ((4, 3),), "float32"),
                Case("2x4:x,y", "y", ((5, 2),), "float32"),
            ),
            # Small integers as logits, so that rows tie across devices and the smallest index must win.
            inputs=(Input(COLUMNS, draw="small_int"),),
            out_layout=REPLICATED,  # the rows are split over no axis, so every device holds every row's answer
            tolerance=EXACT,  # keyed by the case's dtype; the int32 indices must match exactly
            allowed=frozenset({"psum"}),  # psum, pmax and pmin all compile to an all-reduce
        ),
        Task(
            name="subtract_global_mean",
            grade_id="subtract_global_mean",
            kind="shard_map",
            points={"values": 1.0, "technique": 1.0, "communication": 1.0},
            bounds=least_traffic("the mean is one number: all-reduce it, not the rows"),
            cases=(
                Case("8:i", "i", ((4, 3),), "float32"),
                Case("2x4:x,y", "y", ((2, 5),), "float32"),
            ),
            inputs=(Input(ROWS),),
            out_layout=ROWS,
            tolerance=FLOAT,
            allowed=frozenset({"psum"}),
        ),
    ),
)
