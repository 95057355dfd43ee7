"""What a student sees beside a part's verdict: the technique's signature table (her program's
resources beside the reference's, with each part's bound), the picture that explains a part (where
an output lives, a ring's value-hops, when a collective matmul's matmuls could start, what was
sent or held against the reference's), and what a passed part measured."""

from __future__ import annotations

import math

from ..core.dataflow import overlap_problem
from ..core.hlo import torus_hops
from ..core.records import (
    ArrayMeasurement,
    Census,
    Figure,
    MemoryFigure,
    OverlapFigure,
    ResourceSignature,
    RingFigure,
    SignatureRow,
    SignatureTable,
    TrafficFigure,
)
from ..core.tasks import Case, Dimension, Task
from .bounds import bounds_problem, ratio, targets
from .technique import TECHNIQUE, ring_size, skips_neighbours, technique_problem

ArrayMeasured = list[tuple[Case, ArrayMeasurement]]


_LABELS: dict[Dimension, str] = {
    "resident": "held after the call",
    "peak": "memory at the peak",
    "flops": "FLOPs of matmuls",
    "traffic": "bytes sent",
}


def signature_table(task: Task, part: str, correct: ArrayMeasured) -> SignatureTable | None:
    """The technique part's case (the visible one it failed on, else the first right visible
    one): every dimension of its signature beside the reference's, with the bound each part
    holds it to."""
    if part != TECHNIQUE or not task.bounds:
        return None
    shown = [(c, m) for c, m in correct if not c.hidden]
    if not shown:
        return None
    case, m = next(((c, m) for c, m in shown if technique_problem(task, c, m)), shown[0])
    mine, theirs = m["signature"], m["reference_signature"]

    def row(label: str, dimension: Dimension, yours: float | None, reference: float | None) -> SignatureRow:
        bounds = {part: bound.ratio for part, b in task.bounds.items() for d, bound in b.items() if d == dimension}
        return {"dimension": label, "yours": yours, "reference": reference, "bounds": bounds}

    rows = [row(_LABELS[d], d, mine[d], theirs[d]) for d in ("resident", "peak", "flops")]
    traffic, reference = mine["traffic"] or {}, theirs["traffic"] or {}
    for axes in sorted(set(traffic) | set(reference)) or [""]:
        label = f"bytes sent over {axes!r}" if axes else _LABELS["traffic"]
        rows.append(row(label, "traffic", traffic.get(axes, 0.0), reference.get(axes, 0.0)))
    return {"case": case.label(), "rows": rows}


def figure(task: Task, part: str, visible: ArrayMeasured, correct: ArrayMeasured) -> Figure | None:
    """The picture that explains a part: where the first wrong visible case's output lives; for a
    part that passes blocks on (rings, collective matmuls, ring attention, pipelines, experts),
    what each device sends and multiplies at each step, on the case its technique fails on; what
    a right visible case sent against the least it could, or held against the reference's.
    Hidden cases get none."""
    if part == "values":
        return next((m["figure"] for _, m in visible if not m["values"]["ok"] and "figure" in m), None)
    shown = [(c, m) for c, m in correct if not c.hidden]
    if part == TECHNIQUE:
        hops = next(((c, m) for c, m in shown if skips_neighbours(task, m["census"])), None)
        if hops:  # the ring as it runs, its sends past a neighbour in red
            return ring_figure(hops[0], hops[1]["census"]) or _traffic_figure(
                "value-hops",
                hops[1]["census"]["link_values_per_device"],
                hops[1]["census"]["values_per_device"],
                hops[1]["reference_census"].get("link_values_per_device"),
                hops[0],
            )
        if not task.draws_steps or not shown:
            return None
        # Each device's steps on the case the technique fails on, else the first: where its
        # matmuls could start shows the overlap; a program with no step to draw gets the strip.
        case, m = shown[0] if len(shown) == 1 else next((p for p in shown if technique_problem(task, *p)), shown[0])
        steps = ring_figure(case, m["census"])
        return steps if steps or not task.overlapped else _overlap_figure([(case, m)])
    if part == "memory":
        return _memory_figure(task, shown)
    if part != "communication" or not shown:
        return None
    case, m = next(((c, m) for c, m in shown if bounds_problem(task, part, m)), shown[0])
    sent, reference = m["census"].get("program_bytes"), m["reference_census"].get("program_bytes")
    minimum = targets(m).get("comm_bytes", reference)
    return _traffic_figure("bytes", sent, minimum, reference, case)


def _traffic_figure(
    unit: str, sent: float | None, minimum: float | None, reference: float | None, case: Case
) -> TrafficFigure | None:
    """What ``case`` sent against the least it could, where both are known."""
    if sent is None or minimum is None:
        return None
    return {
        "kind": "traffic",
        "unit": unit,
        "sent": sent,
        "minimum": minimum,
        "reference": reference,
        "case": case.label(),
    }


def ring_figure(case: Case, census: Census) -> RingFigure | None:
    """What each device sends and multiplies at each step of ``case``'s program, with the permutes
    that pass a neighbour on the torus of the case's mesh; None without a collective."""
    timeline = census.get("timeline")
    if not timeline:
        return None
    shape, steps, kinds = case.mesh_spec.shape, timeline["steps"], timeline["kinds"]
    far = [
        [i, s, t]
        for i, pairs in enumerate(steps)
        for s, t in pairs
        if kinds[i] == "collective-permute" and torus_hops(s, t, shape) > 1
    ]
    return {
        "kind": "ring",
        "devices": math.prod(shape),
        "steps": steps,
        "far": far,
        "case": case.label(),
        "kinds": kinds,
        "carried": timeline["carried"],
        "computes": timeline["computes"],
    }


def _overlap_figure(shown: ArrayMeasured) -> OverlapFigure | None:
    """When the matmuls of the first right visible case could start, against a ring's."""
    if not shown:
        return None
    case, m = shown[0]
    steps, waits = ring_size(case), m.get("matmul_waits", [])
    return {
        "kind": "overlap",
        "steps": steps,
        "waits": waits,
        "ok": not overlap_problem(waits, steps),
        "case": case.label(),
    }


def _memory_figure(task: Task, shown: ArrayMeasured) -> MemoryFigure | None:
    """Each returned leaf's bytes on one device against the reference's, for the first right
    visible case that holds too much."""
    for case, m in shown:
        if bounds_problem(task, "memory", m) and m.get("memory"):
            theirs = dict((path, held) for path, held, _ in m.get("reference_memory", []))
            leaves = [(path, int(held), float(theirs.get(path, 0))) for path, held, _ in m["memory"]]
            return {"kind": "memory", "leaves": leaves, "case": case.label()}
    return None


def passed_note(task: Task, part: str, measured: ArrayMeasured) -> str:
    """What a passed part measured, on the visible cases: a hidden case's figures would describe it."""
    shown = [m for c, m in measured if m["values"]["ok"] and not c.hidden]
    if not shown and part in (TECHNIQUE, "communication", "memory", "peak memory"):
        return "judged on hidden cases only: no visible case's values are right"
    bounds = task.bounds.get(part)
    if bounds is None:
        return ""
    notes = []
    for dimension, _ in bounds.items():
        ratios = [_ratio_of(dimension, m["signature"], m["reference_signature"]) for m in shown]
        notes.append(f"{_NOTE[dimension]} " + ", ".join(ratios))
    return "against the reference's on the same mesh: " + "; ".join(notes)


_NOTE: dict[Dimension, str] = {
    "resident": "held after the call",
    "peak": "memory at the peak",
    "flops": "FLOPs",
    "traffic": "bytes sent",
}


def _ratio_of(dimension: Dimension, mine: ResourceSignature, theirs: ResourceSignature) -> str:
    """One dimension of a signature as a ratio to the reference's: the largest over the mesh's
    axes for traffic."""
    if dimension == "traffic":
        got, ref = mine["traffic"] or {}, theirs["traffic"] or {}
        pairs = [(got.get(a, 0.0), ref.get(a, 0.0)) for a in sorted(set(got) | set(ref))] or [(0.0, 0.0)]
    else:
        pairs = [(float(mine[dimension] or 0), float(theirs[dimension] or 0))]
    worst = max(pairs, key=lambda p: p[0] / p[1] if p[1] else (math.inf if p[0] else 0.0))
    return ratio(*worst) if worst[1] else ("none" if not worst[0] else f"{worst[0]:,.0f} where the reference has none")
