"""Self-check exercises of course/01_devices_and_meshes.ipynb: reading a mesh's device grid.

Both exercises are plain Python on the data a mesh exposes (``mesh.device_ids.tolist()``, or the
process index of each device). Their worked answers are in ``solutions/``; a student's check meets
them only as the records ``jaxcourse release`` ships.
"""

from __future__ import annotations

from ..core.tasks import Assignment, Case, Task

GRID_2X4 = [[0, 1, 2, 3], [4, 5, 6, 7]]
GRID_2X2X2 = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]

AXIS_GROUPS_CASES = tuple(
    Case(args=args)
    for args in (
        (GRID_2X4, ["x", "y"], "y"),
        (GRID_2X4, ["x", "y"], "x"),
        ([0, 1, 2, 3, 6, 7, 4, 5], ["i"], "i"),  # one axis, devices in a ring order
        (GRID_2X2X2, ["a", "b", "c"], "b"),
        ([[0, 2], [4, 6], [1, 3], [5, 7]], ["x", "y"], "x"),  # devices placed by hand
        ([[0, 1, 2, 3], [2048, 2049, 2050, 2051]], ["x", "y"], "x"),  # ids are labels, not positions
    )
)

CROSS_PROCESS_CASES = tuple(
    Case(args=args)
    for args in (
        ([[0, 0, 0, 0], [1, 1, 1, 1]], ["x", "y"]),
        ([[0, 0], [0, 0], [1, 1], [1, 1]], ["x", "y"]),
        ([[0, 1], [0, 1], [0, 1], [0, 1]], ["x", "y"]),
        ([[[0, 0], [1, 1]], [[2, 2], [3, 3]]], ["a", "b", "c"]),
        ([[0, 1, 0, 1], [1, 0, 1, 0]], ["x", "y"]),
        ([[0, 0, 0, 0, 0, 0, 0, 0]], ["x", "y"]),  # one process: nothing crosses
    )
)

EXERCISES = Assignment(
    name="lecture 01_devices_and_meshes",
    notebook="01_devices_and_meshes.ipynb",
    solutions="lecture_01_devices_and_meshes",
    tasks=(
        Task(
            name="axis_groups",
            grade_id="test_axis_groups",
            kind="python",
            points={"values": 1.0},
            cases=AXIS_GROUPS_CASES,
        ),
        Task(
            name="cross_process_axes",
            grade_id="test_cross_process_axes",
            kind="python",
            points={"values": 1.0},
            cases=CROSS_PROCESS_CASES,
        ),
    ),
)
