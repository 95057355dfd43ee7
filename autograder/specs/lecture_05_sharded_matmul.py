"""Self-check exercises for lecture 05_sharded_matmul (oracles only; never graded).

``matmul_scatter_columns``: on a 2-D mesh, A's rows are split over the other axes and its
contracting dimension over the case's axis, like B's rows; C keeps A's rows and splits its columns
over the case's axis. Only the case's axis talks, and a reduce-scatter of the partial product is
the least it can send (no assignment part works on two axes or scatters columns).
``cheaper_gather``: when A's rows and B's columns are split over the same axis, which operand is
cheaper to all-gather, and what it costs; the oracle measures both plans in the compiled HLO.
"""

from __future__ import annotations

from typing import Any, cast

from ..core.tasks import Assignment, Case, Input, Layout, Task

# A[I over the other axes, J over the case's axis] @ B[J over the case's axis, K] -> C[I as A's,
# K over the case's axis].
OTHERS_BY_AXIS = Layout(("OTHERS", "AXIS"))
AXIS_ROWS = Layout(("AXIS", None))


def _scattered_product(case: Case) -> float:
    """A reduce-scatter of this device's (rows x K) partial product: (N-1)/N of it."""
    n = case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis
    rows = case.shapes[0][0]
    k = case.shapes[1][1]
    return (n - 1) / n * rows * k


def _matmul_scatter_columns_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    # All-reduce the partial product, then keep my columns (twice the traffic; fine for a reference).
    whole = jax.lax.psum(a @ b, axis_name)
    width = whole.shape[1] // jax.lax.axis_size(axis_name)
    return jax.lax.dynamic_slice_in_dim(whole, jax.lax.axis_index(axis_name) * width, width, axis=1)


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
            name="matmul_scatter_columns",
            grade_id="lecture_matmul_scatter_columns",
            kind="shard_map",
            points={"values": 1.0, "communication": 1.0},
            cases=(
                Case("2x4:x,y", "y", ((3, 5), (5, 8)), "float32"),
                Case("2x4:x,y", "x", ((2, 6), (6, 4)), "float32"),
                Case("4x2:x,y", "y", ((5, 3), (3, 6)), "float32"),
            ),
            inputs=(Input(OTHERS_BY_AXIS), Input(AXIS_ROWS)),
            out_layout=OTHERS_BY_AXIS,
            tolerance={"float32": (1e-5, 1e-5)},
            comm_bound=_scattered_product,
            oracle=_matmul_scatter_columns_oracle,
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
