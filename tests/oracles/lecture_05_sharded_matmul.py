"""Independent stand-ins for lecture_05_sharded_matmul's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any, cast


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

    from autograder.core.hlo import hlo_census

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


ORACLES = {
    "matmul_scatter_columns": _matmul_scatter_columns_oracle,
    "cheaper_gather": _cheaper_gather_oracle,
}
