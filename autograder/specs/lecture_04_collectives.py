"""Lecture 04 (collectives): self-check exercises, judged against public oracles.

The shard_map oracles reach the answer through an all-gather and local indexing, never through the
collective the exercise asks for. The cost exercise's oracle does not use a formula: it compiles
the two programs on a mesh of the given size and reads their traffic from the HLO.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any, cast

from ..core.tasks import STACKED, Assignment, Case, Input, Task

EXACT = {"float32": (0.0, 0.0), "int32": (0.0, 0.0)}


def _axis_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis


def _one_block(case: Case) -> float:
    return float(prod(case.shapes[0]))


def _all_to_all_values(case: Case) -> float:
    # Every device keeps 1/N of its block and sends the rest.
    n = _axis_size(case)
    return (n - 1) / n * prod(case.shapes[0])


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

    from ..core.hlo import hlo_census

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


EXERCISES = Assignment(
    name="lecture 04_collectives",
    notebook="04_collectives.ipynb",
    solutions="",
    tasks=(
        Task(
            name="cyclic_shift",
            grade_id="cyclic_shift",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((2, 3),), "float32", kwargs=(("k", 3),)),
                Case("2x4:x,y", "y", ((3,),), "int32", kwargs=(("k", -1),)),
                Case("8:i", "i", ((4,),), "int32", kwargs=(("k", 10),)),
            ),
            inputs=(Input(STACKED),),
            out_layout=STACKED,
            tolerance=EXACT,
            allowed=frozenset({"ppermute"}),
            required=frozenset({"ppermute"}),
            comm_bound=_one_block,
            oracle=_cyclic_shift_oracle,
        ),
        Task(
            name="dispatch_rows",
            grade_id="dispatch_rows",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((8, 3),), "float32"),
                Case("2x4:x,y", "y", ((4, 2),), "int32"),
            ),
            inputs=(Input(STACKED),),
            out_layout=STACKED,
            tolerance=EXACT,
            allowed=frozenset({"all_to_all"}),
            required=frozenset({"all_to_all"}),
            comm_bound=_all_to_all_values,
            oracle=_dispatch_rows_oracle,
        ),
        Task(
            name="matmul_traffic",
            grade_id="matmul_traffic",
            kind="python",
            points={"values": 1.0},
            cases=tuple(Case(args=args) for args in ((8, 16, 4, 8), (4, 12, 6, 4), (64, 8, 64, 8), (6, 2, 10, 2))),
            oracle=_matmul_traffic_oracle,
        ),
    ),
)
