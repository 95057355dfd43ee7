"""Self-check exercises of course/02_sharded_arrays.ipynb: sharding arithmetic.

Which devices hold which elements, before and after a change of layout. (The block shape alone
is assignment 01's ``local_shape``, graded there; these practise where the blocks are.)
"""

from __future__ import annotations

from typing import Any

from ..core.tasks import Assignment, Case, Task


def _spec(*entries: Any) -> dict[str, list[Any]]:
    """A PartitionSpec argument, as plain data that the harness turns back into ``jax.P``."""
    return {"P": [list(e) if isinstance(e, tuple) else e for e in entries]}


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
    solutions="lecture_02_sharded_arrays",
    tasks=(
        Task(
            name="replication_factor",
            grade_id="test_replication_factor",
            kind="python",
            points={"values": 1.0},
            cases=REPLICATION_CASES,
        ),
        Task(
            name="coords_holding_element",
            grade_id="test_coords_holding_element",
            kind="python",
            points={"values": 1.0},
            cases=COORDS_CASES,
        ),
        Task(
            name="elements_received",
            grade_id="test_elements_received",
            kind="python",
            points={"values": 1.0},
            cases=RESHARD_CASES,
        ),
    ),
)
