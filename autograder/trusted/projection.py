"""A shard_map part's time on real machines at a realistic size: its function compiled at the
task's ``at_scale`` case from shapes alone (never run, so nothing that size is ever allocated),
its cost read as a submission's is, and projected by the roofline (``core/roofline.py``).

Three callers: ``probe(fn, at_scale=True)`` in a notebook (the function itself), the reference
run (the solution, kept in the case's record) and the trusted worker (a submission's exported
program, beside that record). The share of its communication that may run under compute comes
from the program's dataflow: what the first matmul does not wait for. A collective matmul whose
first partial product waits for no transfer hides its ring behind its matmuls; one that gathers
first hides nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.dataflow import matmul_waits
from ..core.hlo import hlo_census
from ..core.machines import MACHINES
from ..core.mesh import MeshSpec
from ..core.quick_compile import compiler_options
from ..core.records import ProjectedMeasurement, ShardMapSig, ok
from ..core.roofline import Cost, Projection, cost_of, project
from ..core.tasks import Task
from ..harness.shard_map import arg_structs, build, signature


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
    if task.kind != "shard_map" or task.at_scale is None:
        raise ValueError(f"{task.name} has no case at scale (a shard_map part with at_scale)")
    wrapped, structs, mesh = build(fn, signature(task, task.at_scale.case))
    return _compiled(task.name, wrapped, structs, mesh)


def reference_record(fn: Callable[..., Any], sig: ShardMapSig) -> dict[str, Any]:
    """The reference's record at a realistic size: its cost, no value (nothing was run)."""
    wrapped, structs, mesh = build(fn, sig)
    return {"cost": _compiled(sig["function"], wrapped, structs, mesh).cost.record()}


def measured(exported: Any, sig: ShardMapSig, record: dict[str, Any]) -> ProjectedMeasurement:
    """A submission's exported program (already held to the task's inputs and output sharding)
    compiled at the realistic size, its cost beside the reference's."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    scaled = _compiled(sig["function"], jax.jit(exported.call), arg_structs(sig, mesh), mesh)
    return {"values": ok(), "cost": scaled.cost.record(), "reference_cost": record["cost"], "mesh": scaled.mesh}


def _compiled(name: str, jitted: Any, structs: list[Any], mesh: Any) -> AtScale:
    import jax

    start = time.perf_counter()
    with jax.set_mesh(mesh):
        lowered = jitted.lower(*structs)
        compiled = lowered.compile(compiler_options(mesh))
    seconds = time.perf_counter() - start
    census = hlo_census(compiled.as_text() or "", tuple(mesh.devices.shape), tuple(mesh.axis_names))
    cost = cost_of(lowered, compiled, mesh, overlap_share(lowered.as_text()), census)
    return AtScale(name, cost, dict(zip(mesh.axis_names, mesh.devices.shape)), dict(census.counts), seconds)


def overlap_share(module_text: str) -> float:
    """The share of a program's collective-permutes its first matmul does not wait for: what
    may run under compute. None of them where it has no matmul or no permute."""
    waits = matmul_waits(module_text)
    permutes = module_text.count("stablehlo.collective_permute")
    if not waits or not permutes:
        return 0.0
    return max(0.0, 1.0 - min(waits) / permutes)
