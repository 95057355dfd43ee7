"""Self-check exercises for lecture 05_sharded_matmul (never graded).

``matmul_scatter_columns``: on a 2-D mesh, A's rows are split over the other axes and its
contracting dimension over the case's axis, like B's rows; C keeps A's rows and splits its columns
over the case's axis. Only the case's axis talks, and a reduce-scatter of the partial product is
the least it can send (no assignment part works on two axes or scatters columns).
``cheaper_gather``: when A's rows and B's columns are split over the same axis, which operand is
cheaper to all-gather, and what it costs.
"""

from __future__ import annotations

from ..core.tasks import Assignment, Case, Input, Layout, Task, least_traffic

# A[I over the other axes, J over the case's axis] @ B[J over the case's axis, K] -> C[I as A's,
# K over the case's axis].
OTHERS_BY_AXIS = Layout(("OTHERS", "AXIS"))
AXIS_ROWS = Layout(("AXIS", None))


EXERCISES = Assignment(
    name="lecture 05_sharded_matmul",
    notebook="05_sharded_matmul.ipynb",
    solutions="lecture_05_sharded_matmul",
    tasks=(
        Task(
            name="matmul_scatter_columns",
            grade_id="lecture_matmul_scatter_columns",
            kind="shard_map",
            points={"values": 1.0, "communication": 1.0},
            bounds=least_traffic("a reduce-scatter sends each device's partial product once, split over the devices"),
            cases=(
                Case("2x4:x,y", "y", ((3, 5), (5, 8)), "float32"),
                Case("2x4:x,y", "x", ((2, 6), (6, 4)), "float32"),
                Case("4x2:x,y", "y", ((5, 3), (3, 6)), "float32"),
            ),
            inputs=(Input(OTHERS_BY_AXIS), Input(AXIS_ROWS)),
            out_layout=OTHERS_BY_AXIS,
            tolerance={"float32": (1e-5, 1e-5)},
        ),
        Task(
            name="cheaper_gather",
            grade_id="lecture_cheaper_gather",
            kind="python",
            points={"values": 1.0},
            cases=tuple(Case(args=args) for args in ((16, 32, 8, 8), (8, 16, 64, 4), (64, 4, 64, 2), (24, 40, 24, 8))),
        ),
    ),
)
