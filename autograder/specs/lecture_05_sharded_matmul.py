"""Self-check exercises for lecture 05_sharded_matmul (oracles only; never graded).

``matmul_local_slice``: A's contracting dimension is split, B is whole on every device; the cheap
plan multiplies by the matching rows of B and all-reduces the small product.
``cheaper_gather``: when A's rows and B's columns are split over the same axis, which operand is
cheaper to all-gather, and what it costs; the oracle measures both plans in the compiled HLO.
"""

from __future__ import annotations

from typing import Any, cast

from ..core.tasks import Assignment, Case, Input, Layout, Task

# A (rows over the other axes, contracting dim over the case's axis) @ B (whole) -> C (rows as A).
A_CONTRACTING_SPLIT = Layout(("OTHERS", "AXIS"))
WHOLE = Layout((None, None))
ROWS_ONLY = Layout(("OTHERS", None))


def _all_reduce_product(case: Case) -> float:
    """The all-reduce plan: 2 (N-1)/N of this device's (rows x K) block of C."""
    n = case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis
    rows = case.shapes[0][0]
    k = case.shapes[1][1]
    return 2 * (n - 1) / n * rows * k


def _matmul_local_slice_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    # Gather A's columns (the expensive plan; fine for a reference) and multiply by all of B.
    return jax.lax.all_gather(a, axis_name, axis=1, tiled=True, to="invarying") @ b


def _cheaper_gather_oracle(i: int, j: int, k: int, n: int) -> tuple[str, Any]:
    """Compile both plans with JAX's explicit sharding and read what each sends from the HLO."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding

    from ..core.hlo import hlo_census

    mesh = jax.make_mesh((n,), ("x",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:n])
    a = jax.ShapeDtypeStruct((i, j), jnp.float32, sharding=NamedSharding(mesh, jax.P("x", None)))
    b = jax.ShapeDtypeStruct((j, k), jnp.float32, sharding=NamedSharding(mesh, jax.P(None, "x")))
    sent: dict[str, Any] = {}  # values per device: floats here, no loop leaves them unbounded
    # Gathering A leaves C split like B (by columns); gathering B leaves C split like A (by rows).
    for operand, out_spec in (("A", jax.P(None, "x")), ("B", jax.P("x", None))):
        out = NamedSharding(mesh, out_spec)
        compiled = jax.jit(lambda a, b, out=out: jnp.matmul(a, b, out_sharding=out)).lower(a, b).compile()
        # cast: XLA:CPU always gives the compiled text (as_text may say None on other backends)
        sent[operand] = hlo_census(cast(str, compiled.as_text())).values_per_device
    operand = "A" if sent["A"] <= sent["B"] else "B"
    return operand, sent[operand]


EXERCISES = Assignment(
    name="lecture 05_sharded_matmul",
    notebook="05_sharded_matmul.ipynb",
    solutions="",
    tasks=(
        Task(
            name="matmul_local_slice",
            grade_id="lecture_matmul_local_slice",
            kind="shard_map",
            points={"values": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((4, 8), (64, 3)), "float32"),
                Case("2x4:x,y", "y", ((3, 6), (24, 2)), "float32"),
            ),
            inputs=(Input(A_CONTRACTING_SPLIT), Input(WHOLE)),
            out_layout=ROWS_ONLY,
            tolerance={"float32": (1e-5, 1e-5)},
            comm_bound=_all_reduce_product,
            oracle=_matmul_local_slice_oracle,
        ),
        Task(
            name="cheaper_gather",
            grade_id="lecture_cheaper_gather",
            kind="python",
            points={"values": 1.0},
            cases=tuple(Case(args=args) for args in ((16, 32, 8, 8), (8, 16, 64, 4), (64, 4, 64, 2), (24, 40, 24, 8))),
            oracle=_cheaper_gather_oracle,
        ),
    ),
)
