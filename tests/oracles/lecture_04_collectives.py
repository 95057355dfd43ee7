"""Independent stand-ins for lecture_04_collectives's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast


def _cyclic_shift_oracle(x: Any, axis_name: str, k: int) -> Any:
    import jax

    blocks = jax.lax.all_gather(x, axis_name)  # (N, *x.shape): every device's block
    source = (jax.lax.axis_index(axis_name) - k) % jax.lax.axis_size(axis_name)
    return blocks[source]


def _dispatch_rows_oracle(x: Any, axis_name: str) -> Any:
    import jax

    sent = jax.lax.all_gather(x, axis_name)  # sent[j, d]: the row device j addressed to device d
    return sent[:, jax.lax.axis_index(axis_name)]


def _matmul_traffic_oracle(batch: int, features: int, outputs: int, devices: int) -> tuple[float | None, float | None]:
    """Measured, not derived: compile both programs on `devices` devices and read the HLO."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding

    from autograder.core.hlo import hlo_census

    mesh = jax.make_mesh((devices,), ("i",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:devices])
    x = jax.ShapeDtypeStruct((batch, features), jnp.float32, sharding=NamedSharding(mesh, jax.P(None, "i")))
    w = jax.ShapeDtypeStruct((features, outputs), jnp.float32, sharding=NamedSharding(mesh, jax.P("i", None)))

    def reduce_after(xb: Any, wb: Any) -> Any:
        return jax.lax.psum(xb @ wb, "i")[None]

    def gather_before(xb: Any, wb: Any) -> Any:
        full_x = jax.lax.all_gather(xb, "i", axis=1, tiled=True)
        full_w = jax.lax.all_gather(wb, "i", axis=0, tiled=True)
        return (full_x @ full_w)[None]

    def sent(body: Callable[..., Any]) -> float | None:
        program = jax.jit(
            jax.shard_map(body, mesh=mesh, in_specs=(jax.P(None, "i"), jax.P("i", None)), out_specs=jax.P("i"))
        )
        # cast: XLA:CPU always gives the compiled text (as_text may say None on other backends)
        return hlo_census(cast(str, program.lower(x, w).compile().as_text())).values_per_device

    return sent(reduce_after), sent(gather_before)


ORACLES = {
    "cyclic_shift": _cyclic_shift_oracle,
    "dispatch_rows": _dispatch_rows_oracle,
    "matmul_traffic": _matmul_traffic_oracle,
}
