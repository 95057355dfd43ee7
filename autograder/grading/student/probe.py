"""``probe(fn)``: what a notebook's function compiles to, as the grader sees it, without a verdict.

Assignments ask students to predict collectives and bytes before they look; a ``measure`` cell in
the notebook calls ``probe`` and prints the prediction beside what the compiled program does. At
a realistic size, the reference's figures and projected times stand beside the student's, read
from the reference's record at that size as ``jaxcourse check`` reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any, cast

from ...core.errors import JaxcourseError
from ...core.machines import MACHINES
from ...core.records import CostRecord, RingFigure, ShardedStepSig, ShardMapSig
from ...core.roofline import Cost, Projection, project
from ...core.tasks import Assignment, Case, Task
from ...core.units import duration, quantity
from ...harness import shard_map as harness
from ...harness.calls import signature
from ...trusted import projection
from ...trusted import reference as records
from ...trusted.explain import ring_figure
from ...trusted.inputs import make_inputs
from ...trusted.measure import execute
from ..pipeline.plan import projected
from ..reports import figures
from ..reports.scale_view import MODEL, breakdown
from ..reports.signature_view import ratio
from .self_check import CheckFailed, find_task, records_provider, reference_records


@dataclass(frozen=True)
class Probe:
    """One compiled call of a task's function: its mesh and inputs, the collectives its HLO
    runs, the bytes one device sends (at the program's own dtypes), the FLOPs of its matmuls and
    the memory it needs at its peak, per device: what the grader measures of it. Its repr gives
    each figure with its unit, and the case with its options."""

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
    case: str = ""  # the case's label: its mesh, dtype, per-device shapes and options
    # At scale only: the reference's cost there and its times, or why there is none to show.
    reference: Cost | None = None
    reference_projected: dict[str, Projection] = field(default_factory=dict)
    no_reference: str = ""

    def _repr_html_(self) -> str:
        """In a notebook: the text, and the ring's picture where the program has one."""
        return f"<pre>{escape(repr(self))}</pre>" + (figures.svg(self.ring) if self.ring else "")

    def __repr__(self) -> str:
        inputs = ", ".join(f"{'x'.join(map(str, s))} {d}" for s, d in zip(self.shapes, self.dtypes))
        runs = ", ".join(f"{n} {name}" for name, n in sorted(self.collectives.items())) or "no collectives"
        case = self.case if self.case.startswith("mesh ") else ", ".join(filter(None, (f"mesh {self.mesh}", self.case)))
        head = f"{self.function}({inputs}) on {case}: runs {runs}"
        if not self.projected:
            return (
                f"{head}; per device, sends {_figure(self.bytes_per_device, 'B')}, multiplies "
                f"{_figure(self.flops, 'FLOP')} and needs {_figure(self.peak_bytes, 'B')} at its peak"
            )
        return "\n".join([head, *self._figures(), *self._times()])

    def _figures(self) -> list[str]:
        """What one device spends, beside the reference's where its record is at hand."""
        ref = self.reference
        rows = [
            ("sends", self.bytes_per_device, sum(ref.traffic.values()) if ref else None, "B"),
            ("multiplies", self.flops, ref.flops if ref else None, "FLOP"),
            ("needs at its peak", self.peak_bytes, ref.peak if ref else None, "B"),
        ]
        if ref is None:
            table = [("per device", "yours"), *((name, _figure(y, unit)) for name, y, _, unit in rows)]
            return _aligned(table) + [f"no reference beside it: {self.no_reference}"]
        return _aligned(
            [
                ("per device", "yours", "reference", "ratio"),
                *((name, _figure(y, unit), _figure(r, unit), ratio(y, r)) for name, y, r, unit in rows),
            ]
        )

    def _times(self) -> list[str]:
        """Each machine's projected time, the reference's and their ratio, and where the time goes."""
        lines = [f"{MODEL}:"]
        if not self.reference_projected:
            table: list[tuple[str, ...]] = [("machine", "yours", "where yours goes")]
            table += [(name, duration(p.total_s), breakdown(p)) for name, p in self.projected.items()]
            return lines + _aligned(table, words_last=True)
        table = [("machine", "yours", "reference", "ratio", "where yours goes")]
        for name, p in self.projected.items():
            theirs = self.reference_projected[name].total_s
            table.append((name, duration(p.total_s), duration(theirs), ratio(p.total_s, theirs), breakdown(p)))
        return lines + _aligned(table, words_last=True)


def probe(
    fn: Callable[..., Any], *, task: str | None = None, case: Case | int | None = None, at_scale: bool = False
) -> Probe:
    """Compile ``fn`` as the grader does on its task's first case (or ``case``: a ``Case``, or the
    number of one of the task's visible cases, counted from 0) and read its HLO. ``at_scale``: at the task's realistic size instead, compiled from shapes alone and never run,
    with its time projected on real machines, beside the reference's where the course's record of
    it is at hand (else one line says why not). A function that does not compile or run raises
    ``CheckFailed`` with its own error."""
    assignment, found = find_task(task or str(getattr(fn, "__name__", "")))
    if at_scale and found.kind in projection.BUILD:  # a training step too: compiled, never run
        return _at_scale(fn, assignment, found)
    if found.kind != "shard_map":
        scaled = (
            " (probe(fn, at_scale=True) projects it at its realistic size)" if found.kind in projection.BUILD else ""
        )
        raise CheckFailed(f"{found.name} is not a shard_map function: there is no program to probe{scaled}")
    case = _pick(found, case)
    sig = signature(found, case, assignment.name)
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
        ring=ring_figure(case, census),
        case=case.label(),
    )


def _pick(task: Task, case: Case | int | None) -> Case:
    """The case to compile: the first where none is named."""
    if case is None or isinstance(case, Case):
        return case or task.cases[0]
    if not 0 <= case < len(task.cases):
        raise CheckFailed(f"{task.name} has {len(task.cases)} cases: pass case=0 to case={len(task.cases) - 1}")
    return task.cases[case]


def _at_scale(fn: Callable[..., Any], assignment: Assignment, task: Task) -> Probe:
    if task.at_scale is None:
        raise CheckFailed(f"{task.name} has no realistic size to project at")
    try:
        scaled = projection.at_scale(fn, task)
    except Exception as err:
        raise CheckFailed(f"{task.name} does not compile at scale: {type(err).__name__}: {str(err)[:200]}") from None
    cost, sig = scaled.cost, cast(ShardMapSig | ShardedStepSig, signature(task, task.at_scale.case))
    collectives = {name: n for name, n in scaled.collectives.items() if n}
    sent = sum(cost.traffic.values())
    found = _reference_at_scale(assignment, task)
    reference = Cost.of(found) if not isinstance(found, str) else None
    return Probe(
        task.name,
        sig["mesh"],
        *_inputs(sig),
        collectives,
        sent,
        cost.flops,
        cost.peak,
        scaled.everywhere(),
        case=task.at_scale.case.label(),
        reference=reference,
        reference_projected={m: project(reference, scaled.mesh, on) for m, on in MACHINES.items()} if reference else {},
        no_reference=found if isinstance(found, str) else "",
    )


def _reference_at_scale(assignment: Assignment, task: Task) -> CostRecord | str:
    """The reference's cost at ``task``'s realistic size, from its record as ``jaxcourse check``
    reads it (shipped with the course, or made from the instructor's solutions and kept), or in
    one line why there is none."""
    test = projected(assignment.name, task)
    try:
        prefix = reference_records(records_provider(assignment, hidden=False), [test])[test.id]
        record, _ = records.load(prefix)
    except JaxcourseError as err:  # no records here, or none for this size: the student's figures alone
        return str(err).strip().splitlines()[0]
    cost: CostRecord | None = record.get("cost")
    return cost if cost is not None else "the reference's record holds no cost at scale"


def _figure(value: float | None, unit: str) -> str:
    return "unknown" if value is None else quantity(value, unit)


def _aligned(rows: Sequence[tuple[str, ...]], words_last: bool = False) -> list[str]:
    """Rows as indented columns: the first left-aligned, figures right-aligned, and the last
    left-aligned too where it holds words (``words_last``)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    left = {0, len(widths) - 1} if words_last else {0}
    return [
        "  " + "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]


def _inputs(sig: ShardMapSig | ShardedStepSig) -> tuple[tuple[tuple[int, ...], ...], tuple[str, ...]]:
    return tuple(tuple(i["shape"]) for i in sig["inputs"]), tuple(i["dtype"] for i in sig["inputs"])
