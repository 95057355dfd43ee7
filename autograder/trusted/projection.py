"""An array part's time on real machines at a realistic size: its function compiled at the
task's ``at_scale`` case from shapes alone (never run, so nothing that size is ever allocated),
its cost read as a submission's is, and projected by the roofline (``core/roofline.py``).

Three callers: ``probe(fn, at_scale=True)`` in a notebook (the function itself), the reference
run (the solution, kept in the case's record) and the trusted worker (a submission's exported
program, beside that record). What of its communication may run under other work comes from
the program's dataflow (``core/overlap.py``): a collective matmul's ring hides behind the
matmuls of the blocks already there; one that gathers first hides nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from ..core.hlo import hlo_census
from ..core.machines import MACHINES
from ..core.mesh import MeshSpec
from ..core.quick_compile import compiler_options
from ..core.records import Measurement, ProjectedMeasurement, ShardedStepSig, ShardMapSig, fail, ok
from ..core.roofline import Cost, Projection, cost_of, project
from ..core.tasks import Task
from ..harness import shard_map, sharded_step
from ..harness.calls import signature
from ..harness.shard_map import arg_structs

ArraySig = ShardMapSig | ShardedStepSig
# How each array kind wraps a function: the jitted program, its argument structs, its mesh.
BUILD: dict[str, Callable[[Callable[..., Any], Any], tuple[Any, list[Any], Any]]] = {
    "shard_map": shard_map.build,
    "sharded_step": sharded_step.build,
}


@dataclass(frozen=True)
class AtScale:
    """A part's program at its realistic size, on every machine."""

    task: str
    cost: Cost
    mesh: dict[str, int]
    collectives: dict[str, int]  # what its compiled program runs, each as often as it runs
    compile_seconds: float

    def on(self, machine: str) -> Projection:
        return project(self.cost, self.mesh, MACHINES[machine])

    def everywhere(self) -> dict[str, Projection]:
        return {name: self.on(name) for name in MACHINES}


def at_scale(fn: Callable[..., Any], task: Task) -> AtScale:
    """``fn`` (a student's or the reference) compiled at ``task``'s realistic size."""
    if task.at_scale is None:
        raise ValueError(f"{task.name} has no case at scale (an array part with at_scale)")
    sig = cast(ArraySig, signature(task, task.at_scale.case))  # Task holds a scale to the array kinds
    return _compiled(sig["function"], *BUILD[sig["kind"]](fn, sig))


def reference_record(fn: Callable[..., Any], sig: ArraySig) -> dict[str, Any]:
    """The reference's record at a realistic size: its cost, no value (nothing was run)."""
    return {"cost": _compiled(sig["function"], *BUILD[sig["kind"]](fn, sig)).cost.record()}


def measured(call: Any, sig: ArraySig, record: dict[str, Any]) -> ProjectedMeasurement:
    """A submission's exported program, jitted as its kind runs it (already held to the task's
    inputs), compiled at the realistic size, its cost beside the reference's."""
    mesh = MeshSpec.parse(sig["mesh"]).build()
    scaled = _compiled(sig["function"], call, arg_structs(sig, mesh), mesh)
    return {"values": ok(), "cost": scaled.cost.record(), "reference_cost": record["cost"], "mesh": scaled.mesh}


def measured_or_why(call: Any, sig: ArraySig, record: dict[str, Any]) -> Measurement:
    """``measured``, or why the program could not be costed at scale: a failed case, never scored."""
    try:
        return measured(call, sig, record)
    except Exception as err:  # a loop of unknown length, or a compiler's refusal at that size
        return {"values": fail(f"failed to compile at scale: {str(err)[:300]}")}


def _compiled(name: str, jitted: Any, structs: list[Any], mesh: Any) -> AtScale:
    import jax

    start = time.perf_counter()
    with jax.set_mesh(mesh):
        lowered = jitted.lower(*structs)
        compiled = lowered.compile(compiler_options(mesh))
    seconds = time.perf_counter() - start
    census = hlo_census(compiled.as_text() or "", tuple(mesh.devices.shape), tuple(mesh.axis_names))
    cost = cost_of(lowered, compiled, mesh, census)
    return AtScale(name, cost, dict(zip(mesh.axis_names, mesh.devices.shape)), dict(census.counts), seconds)
