"""Lecture 04 (collectives): self-check exercises, never graded.

Two per-device functions, each with the one collective it must use and the least it can send,
and a cost model of two ways to multiply sharded matrices.
"""

from __future__ import annotations

from typing import cast

from ..core.tasks import STACKED, Assignment, Case, Input, Task, least_traffic

EXACT = {"float32": (0.0, 0.0), "int32": (0.0, 0.0)}


def _axis_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis


EXERCISES = Assignment(
    name="lecture 04_collectives",
    notebook="04_collectives.ipynb",
    solutions="lecture_04_collectives",
    tasks=(
        Task(
            name="cyclic_shift",
            grade_id="cyclic_shift",
            kind="shard_map",
            points={"values": 1.0, "technique": 1.0, "communication": 1.0},
            bounds=least_traffic("a shift sends each device's block once"),
            cases=(
                Case("8:i", "i", ((2, 3),), "float32", kwargs=(("k", 3),)),
                Case("2x4:x,y", "y", ((3,),), "int32", kwargs=(("k", -1),)),
                Case("8:i", "i", ((4,),), "int32", kwargs=(("k", 10),)),
            ),
            inputs=(Input(STACKED),),
            out_layout=STACKED,
            tolerance=EXACT,
            allowed=frozenset({"ppermute"}),
        ),
        Task(
            name="dispatch_rows",
            grade_id="dispatch_rows",
            kind="shard_map",
            points={"values": 1.0, "technique": 1.0, "communication": 1.0},
            bounds=least_traffic("an all-to-all sends each device's rows for the others once"),
            cases=(
                Case("8:i", "i", ((8, 3),), "float32"),
                Case("2x4:x,y", "y", ((4, 2),), "int32"),
            ),
            inputs=(Input(STACKED),),
            out_layout=STACKED,
            tolerance=EXACT,
            allowed=frozenset({"all_to_all"}),
        ),
        Task(
            name="matmul_traffic",
            grade_id="matmul_traffic",
            kind="python",
            points={"values": 1.0},
            cases=tuple(Case(args=args) for args in ((8, 16, 4, 8), (4, 12, 6, 4), (64, 8, 64, 8), (6, 2, 10, 2))),
        ),
    ),
)
