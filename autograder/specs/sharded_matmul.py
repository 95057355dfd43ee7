"""Assignment 02_sharded_matmul: multiplying sharded matrices, choosing the collective, and
overlapping communication with compute in a ring.

Two parts give only the layouts (``CHOICES``): the student picks the plan, and the grader holds
the traffic to the cheapest plan's for each case's sizes, so the right choice changes with them.

Every graded function multiplies A (m x k) by B (k x n) on one mesh axis of N devices, each with
its own layout of A, B and C. The closed forms of what each plan sends are written once, here:
the grader bounds each function's traffic by them, and ``comm_bytes``'s oracle returns them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ..core.mesh import MeshSpec
from ..core.tasks import DTYPE_BYTES, REPLICATED, Assignment, Case, Input, Layout, Task

COLS = Layout((None, "AXIS"))  # P(None, X): columns split over the case's axis
ROWS = Layout(("AXIS", None))  # P(X, None): rows split over the case's axis

# Values one device sends under each plan, for A (m x k) @ B (k x n) on a ring of N devices.
CLOSED_FORMS: dict[str, Callable[[int, int, int, int], float]] = {
    "matmul_allgather": lambda m, k, n, N: (N - 1) / N * m * k,  # gather A
    "matmul_allreduce": lambda m, k, n, N: 2 * (N - 1) / N * m * n,  # all-reduce C
    "matmul_gather_both": lambda m, k, n, N: (N - 1) / N * (m * k + k * n),  # gather A and B
    "matmul_reduce_scatter": lambda m, k, n, N: (N - 1) / N * m * n,  # reduce-scatter C
    "matmul_reshard": lambda m, k, n, N: (N - 1) / N * k * n,  # gather B
    "collective_matmul_allgather": lambda m, k, n, N: (N - 1) / N * m * k,  # N - 1 blocks of A
    "collective_matmul_reduce_scatter": lambda m, k, n, N: (N - 1) / N * m * n,  # N - 1 of C
}


def comm_bytes(strategy: str, m: int, k: int, n: int, num_devices: int, itemsize: int) -> float:
    """Bytes each device sends under ``strategy``: the closed forms above, at ``itemsize``."""
    return CLOSED_FORMS[strategy](m, k, n, num_devices) * itemsize


def _axis_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis


def _closed_form(strategy: str, a: Layout, b: Layout) -> Callable[[Case], float]:
    """The case's bound: global m, k, n from its per-device shapes and the task's layouts."""

    def bound(case: Case) -> float:
        m, k, n = _global_mkn(case, a, b)
        return comm_bytes(strategy, m, k, n, _axis_size(case), DTYPE_BYTES[case.dtype])

    return bound


def _global_mkn(case: Case, a: Layout, b: Layout) -> tuple[int, int, int]:
    m, k = a.global_shape(case.shapes[0], case.mesh_spec, case.axis)
    _, n = b.global_shape(case.shapes[1], case.mesh_spec, case.axis)
    return m, k, n


def _plans(plans: tuple[str, ...], a: Layout, b: Layout) -> Callable[[Case], dict[str, float]]:
    """Bytes per device of each plan a student may choose for the case's sizes."""

    def each(case: Case) -> dict[str, float]:
        m, k, n = _global_mkn(case, a, b)
        return {plan: comm_bytes(plan, m, k, n, _axis_size(case), DTYPE_BYTES[case.dtype]) for plan in plans}

    return each


def _ring_steps(case: Case) -> dict[str, int]:
    return {"ppermute": _axis_size(case) - 1}


# (mesh, axis, global m, k, n, dtype): rings of 8, 4 and 2, on one axis of a 2-D mesh too. B has
# fewer values than A everywhere, so gathering the wrong operand shows in the traffic.
VISIBLE = (("8:i", "i", 32, 16, 8, "float32"), ("2x4:x,y", "y", 16, 8, 12, "float32"),
           ("2:i", "i", 6, 10, 4, "float32"))  # fmt: skip


def matmul_cases(a: Layout, b: Layout, sizes: tuple[tuple[Any, ...], ...]) -> tuple[Case, ...]:
    """Cases from global sizes: each operand's per-device shape follows from its layout."""
    return tuple(
        Case(mesh, axis, (_local(a, (m, k), mesh, axis), _local(b, (k, n), mesh, axis)), dtype)
        for mesh, axis, m, k, n, dtype in sizes
    )


def _local(layout: Layout, shape: tuple[int, int], mesh: str, axis: str) -> tuple[int, ...]:
    n = MeshSpec.parse(mesh).axis_sizes[axis]
    entries = layout.template + (None,) * (len(shape) - len(layout.template))
    return tuple(size // n if entry == "AXIS" else size for size, entry in zip(shape, entries))


FLOAT32 = (1e-5, 1e-5)
BFLOAT16 = (2e-2, 1e-1)  # 8 significant bits: a ring rounds its partial sums once per step
TOLERANCE = {"float32": FLOAT32, "bfloat16": BFLOAT16}
PLAIN_POINTS = {"values": 2.0, "hidden values": 1.0, "collectives": 2.0, "communication": 1.0}
RING_POINTS = {"values": 4.0, "hidden values": 2.0, "collectives": 2.0, "communication": 2.0}
CHOICE_POINTS = {
    "values": 2.0,
    "hidden values": 1.0,
    "collectives": 1.0,
    "communication": 2.0,
}  # the choice is the point


def _matmul_task(
    name: str, a: Layout, b: Layout, c: Layout, collective: str, oracle: Callable[..., Any], ring: bool = False
) -> Task:
    """A graded matmul: its layouts, the one collective it must use, its closed-form traffic; a
    ``ring`` must also run that collective exactly N - 1 times, each step to a neighbour, with a
    partial matmul per step that waits only for the blocks that have arrived."""
    return Task(
        name=name,
        grade_id=f"test_{name}",
        kind="shard_map",
        points=RING_POINTS if ring else PLAIN_POINTS,
        cases=matmul_cases(a, b, VISIBLE),
        inputs=(Input(a), Input(b)),
        out_layout=c,
        tolerance=TOLERANCE,
        allowed=frozenset({collective}),
        required=frozenset({collective}),
        comm_bytes=_closed_form(name, a, b),
        collective_counts=_ring_steps if ring else None,
        neighbours_only=ring,
        overlapped=ring,
        oracle=oracle,
    )


# The plans a student chooses between where a part gives only the layouts (lecture 5's cases 2
# and 3 with C on every device): bytes per device of each, from the closed forms above.
CHOICES = {
    "matmul_case2": ("matmul_allgather", "matmul_allreduce"),  # gather A, or all-reduce partial sums
    "matmul_case3": ("matmul_allreduce", "matmul_gather_both"),  # all-reduce partial sums, or gather A and B
}


def _choice_task(name: str, a: Layout, b: Layout, oracle: Callable[..., Any]) -> Task:
    """A part that names only the layouts: any of its plans' collectives may be used, and the
    traffic must be the cheapest plan's for the case's sizes."""
    plans = _plans(CHOICES[name], a, b)
    return Task(
        name=name,
        grade_id=f"test_{name}",
        kind="shard_map",
        points=CHOICE_POINTS,
        cases=matmul_cases(a, b, VISIBLE),
        inputs=(Input(a), Input(b)),
        out_layout=REPLICATED,
        tolerance=TOLERANCE,
        allowed=frozenset({"all_gather", "psum"}),
        comm_bytes=lambda case: min(plans(case).values()),
        plan_bytes=plans,
        oracle=oracle,
    )


def _allgather_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.all_gather(a, axis_name, axis=1, tiled=True, to="invarying") @ b


def _allreduce_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum(a @ b, axis_name)


def _reduce_scatter_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum_scatter(a @ b, axis_name, scatter_dimension=0, tiled=True)


def _reshard_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return a @ jax.lax.all_gather(b, axis_name, axis=1, tiled=True)


def _gather_rows_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.all_gather(a, axis_name, axis=0, tiled=True) @ b


COMM_BYTES_CASES = tuple(Case(args=(strategy, 32, 16, 8, 8, 4)) for strategy in CLOSED_FORMS) + (
    Case(args=("matmul_reshard", 16, 8, 12, 4, 2)),
)

ASSIGNMENT = Assignment(
    name="02_sharded_matmul",
    notebook="02_sharded_matmul.ipynb",
    solutions="sharded_matmul",
    tasks=(
        Task(
            name="comm_bytes",
            grade_id="test_comm_bytes",
            kind="python",
            points={"values": 4.0, "hidden values": 2.0},
            cases=COMM_BYTES_CASES,
            oracle=comm_bytes,
        ),
        _choice_task("matmul_case2", COLS, REPLICATED, _allgather_oracle),
        _choice_task("matmul_case3", COLS, ROWS, _allreduce_oracle),
        _matmul_task("matmul_reduce_scatter", COLS, ROWS, ROWS, "psum_scatter", _reduce_scatter_oracle),
        _matmul_task("matmul_reshard", ROWS, COLS, ROWS, "all_gather", _reshard_oracle),
        _matmul_task("collective_matmul_allgather", ROWS, COLS, COLS, "ppermute", _gather_rows_oracle, True),
        _matmul_task("collective_matmul_reduce_scatter", COLS, ROWS, ROWS, "ppermute", _reduce_scatter_oracle, True),
    ),
)
