"""What students of 02_sharded_matmul are given: the layouts of A, B and C, the plans a choosing
part chooses between, and the visible cases (global sizes) every part meets. The notebook's
``measure`` and ``suspect`` cells import them; the task spec (``specs/sharded_matmul.py``) builds
its tasks from them."""

from __future__ import annotations

from typing import Any

from ...core.mesh import MeshSpec
from ...core.tasks import Case, Layout

COLS = Layout((None, "AXIS"))  # P(None, X): columns split over the case's axis
ROWS = Layout(("AXIS", None))  # P(X, None): rows split over the case's axis

# The plans a student chooses between where a part gives only the layouts (lecture 5's cases 2
# and 3 with C on every device).
CHOICES = {
    "matmul_case2": ("matmul_allgather", "matmul_allreduce"),  # gather A, or all-reduce partial sums
    "matmul_case3": ("matmul_allreduce", "matmul_gather_both"),  # all-reduce partial sums, or gather A and B
}

# (mesh, axis, global m, k, n, dtype): rings of 8, 4 and 2, on one axis of a 2-D mesh too. B has
# fewer values than A everywhere, so gathering the wrong operand shows in the traffic.
VISIBLE = (
    ("8:i", "i", 32, 16, 8, "float32"),
    ("2x4:x,y", "y", 16, 8, 12, "float32"),
    ("2:i", "i", 6, 10, 4, "float32"),
)


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


def global_mkn(case: Case, a: Layout, b: Layout) -> tuple[int, int, int]:
    """A case's global m, k and n, from its per-device shapes and the operands' layouts."""
    m, k = a.global_shape(case.shapes[0], case.mesh_spec, case.axis)
    _, n = b.global_shape(case.shapes[1], case.mesh_spec, case.axis)
    return m, k, n
