"""``probe(fn)``: what a notebook's function compiles to, as the grader sees it, without a verdict.

Assignments ask students to predict collectives and bytes before they look; a ``measure`` cell in
the notebook calls ``probe`` and prints the prediction beside what the compiled program does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any, cast

from ..core.records import RingFigure, ShardedStepSig, ShardMapSig
from ..core.roofline import Projection
from ..core.tasks import Case, Task
from ..harness import shard_map as harness
from ..harness.calls import signature
from ..trusted import projection
from ..trusted.explain import ring_figure
from ..trusted.inputs import make_inputs
from ..trusted.measure import execute
from . import figures
from .scale_view import breakdown
from .self_check import CheckFailed, find_task


@dataclass(frozen=True)
class Probe:
    """One compiled call of a task's function: its mesh and inputs, the collectives its HLO
    runs, the bytes one device sends (at the program's own dtypes), the FLOPs of its matmuls and
    the memory it needs at its peak, per device: what the grader measures of it."""

    function: str
    mesh: str
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    collectives: dict[str, int]
    bytes_per_device: float | None
    flops: float | None
    peak_bytes: int | None
    # At scale only: its time on each machine, a model's (core/roofline.py), never a measurement.
    projected: dict[str, Projection] = field(default_factory=dict)
    # A program that passes blocks round: what each device sends at each step, as a picture.
    ring: RingFigure | None = None

    def _repr_html_(self) -> str:
        """In a notebook: the text, and the ring's picture where the program has one."""
        return f"<pre>{escape(repr(self))}</pre>" + (figures.svg(self.ring) if self.ring else "")

    def __repr__(self) -> str:
        inputs = ", ".join(f"{'x'.join(map(str, s))} {d}" for s, d in zip(self.shapes, self.dtypes))
        runs = ", ".join(f"{n} {name}" for name, n in sorted(self.collectives.items())) or "no collectives"
        lines = [
            f"{self.function}({inputs}) on mesh {self.mesh}: runs {runs}; sends {self.bytes_per_device} bytes, "
            f"multiplies {self.flops} FLOPs and needs {self.peak_bytes} bytes at its peak, per device"
        ]
        if self.projected:
            lines.append("projected (a roofline: peak rates, no latency; compute and memory overlap, links add):")
        lines += [f"  {name}: {p.total_s * 1e3:.3f} ms = {breakdown(p)}" for name, p in self.projected.items()]
        return "\n".join(lines)


def probe(
    fn: Callable[..., Any], *, task: str | None = None, case: Case | None = None, at_scale: bool = False
) -> Probe:
    """Compile ``fn`` as the grader does on its task's first case (or ``case``) and read its HLO.
    ``at_scale``: at the task's realistic size instead, compiled from shapes alone and never run,
    with its time projected on real machines. A function that does not compile or run raises
    ``CheckFailed`` with its own error."""
    assignment, found = find_task(task or str(getattr(fn, "__name__", "")))
    if at_scale and found.kind in projection.BUILD:  # a training step too: compiled, never run
        return _at_scale(fn, found)
    if found.kind != "shard_map":
        scaled = (
            " (probe(fn, at_scale=True) projects it at its realistic size)" if found.kind in projection.BUILD else ""
        )
        raise CheckFailed(f"{found.name} is not a shard_map function: there is no program to probe{scaled}")
    sig = signature(found, case or found.cases[0], assignment.name)
    assert sig["kind"] == "shard_map"
    try:
        wrapped, _, mesh = harness.build(fn, sig)
        _, structure = execute(wrapped, make_inputs(sig, 0, mesh), mesh, drawn=True)
    except Exception as err:  # an unfinished or broken function: its own error, in one line
        raise CheckFailed(f"{found.name} does not run yet: {type(err).__name__}: {str(err)[:200]}") from None
    census, spent = structure["census"], structure["signature"]
    return Probe(
        found.name,
        sig["mesh"],
        *_inputs(sig),
        dict(census.get("counts", {})),
        census.get("program_bytes"),
        spent["flops"],
        spent["peak"],
        ring=ring_figure(case or found.cases[0], census),
    )


def _at_scale(fn: Callable[..., Any], task: Task) -> Probe:
    if task.at_scale is None:
        raise CheckFailed(f"{task.name} has no realistic size to project at")
    try:
        scaled = projection.at_scale(fn, task)
    except Exception as err:
        raise CheckFailed(f"{task.name} does not compile at scale: {type(err).__name__}: {str(err)[:200]}") from None
    cost, sig = scaled.cost, cast(ShardMapSig | ShardedStepSig, signature(task, task.at_scale.case))
    collectives = {name: n for name, n in scaled.collectives.items() if n}
    sent = sum(cost.traffic.values())
    return Probe(task.name, sig["mesh"], *_inputs(sig), collectives, sent, cost.flops, cost.peak, scaled.everywhere())


def _inputs(sig: ShardMapSig | ShardedStepSig) -> tuple[tuple[tuple[int, ...], ...], tuple[str, ...]]:
    return tuple(tuple(i["shape"]) for i in sig["inputs"]), tuple(i["dtype"] for i in sig["inputs"])
