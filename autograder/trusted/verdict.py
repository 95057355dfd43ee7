"""The verdict on array and plain-Python tasks: per-case measurements against the task spec and
the closed-form targets of each case (its reference record's), giving scores and reasons
(training tasks have their own, in ``training/``).

Values come first: collectives and communication are judged only on cases whose values are right,
so a submission cannot earn points without computing correct outputs; and communication only once
the collectives are right, so the built-in collective a part forbids earns none of what the part
teaches. A visible part judged on a hidden case names no hidden case: its message says only that
one fails, and how.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import cast

from ..core.dataflow import overlap_problem
from ..core.records import (
    ArrayMeasurement,
    CaseTargets,
    Census,
    Figure,
    MemoryFigure,
    OverlapFigure,
    TestResult,
    TrafficFigure,
)
from ..core.tasks import COLLECTIVES, HLO_TO_JAX, Case, Task
from .jobs import Measured

# The array kinds' measurements, and the plain-Python kind's, which have values alone and are
# scored on values alone: this module is handed only those kinds.
ArrayMeasured = list[tuple[Case, ArrayMeasurement]]


def score(task: Task, measured: Measured) -> list[TestResult]:
    """Values first (visible, then hidden cases); collectives and communication only on the cases
    whose values are right."""
    cases = cast(ArrayMeasured, measured)
    visible = [(c, m) for c, m in cases if not c.hidden]
    hidden = [(c, m) for c, m in cases if c.hidden]
    correct = [(c, m) for c, m in cases if m["values"]["ok"]]
    judges = {
        "values": lambda: _values(visible),
        "hidden values": lambda: _values(hidden),
        "collectives": lambda: _structure(correct, lambda c, m: _collective_problem(task, c, m), "collectives"),
        "communication": lambda: (
            _gated(task, correct)
            or _structure(correct, lambda c, m: _communication_problem(task, c, m), "communication")
        ),
        "memory": lambda: _structure(correct, lambda c, m: _memory_problem(task, c, m), "memory"),
        "peak memory": lambda: _structure(correct, lambda c, m: _peak_problem(m), "peak memory"),
    }
    results = []
    for part, points in task.points.items():
        if part == "hidden values" and not hidden:
            continue  # a student's own check: hidden cases stay with the instructor
        problem = judges[part]()
        results.append(
            TestResult(
                name=f"{task.name}: {part}",
                grade_id=task.grade_id,
                score=0.0 if problem else points,
                max_score=points,
                status="failed" if problem else "passed",
                message=problem or _passed_note(task, part, cases),
                visibility="hidden" if part == "hidden values" else "visible",
                figure=_figure(task, part, visible, correct),
            )
        )
    return results


def _figure(task: Task, part: str, visible: ArrayMeasured, correct: ArrayMeasured) -> Figure | None:
    """The picture that explains a part: where the first wrong visible case's output lives, or
    what a right visible case sent against the minimum (the first that sent too much, else the
    first). Hidden cases get none."""
    if part == "values":
        return next((m["figure"] for _, m in visible if not m["values"]["ok"] and "figure" in m), None)
    if part == "collectives" and task.overlapped:
        return _overlap_figure(correct)
    if part == "memory":
        return _memory_figure(task, correct)
    if part != "communication":
        return None
    shown = [(c, m) for c, m in correct if not c.hidden]  # the case the message is about, if one fails
    case, m = next(
        ((c, m) for c, m in shown if _communication_problem(task, c, m)), shown[0] if shown else (None, None)
    )
    if case is None or m is None or m["census"]["values_per_device"] is None:
        return None
    reference = m.get("reference_census") or {}
    census = m["census"]
    if _skips_neighbours(task, census):  # against the ring's own values, one hop each
        return _traffic_figure("value-hops", census["link_values_per_device"], census["values_per_device"],
                               reference.get("link_values_per_device"), case)  # fmt: skip
    minimum: float | None
    targets = _targets(m)
    if "comm_bytes" in targets:
        sent, minimum, ref, unit = (
            m["census"]["program_bytes"],
            targets["comm_bytes"],
            reference.get("program_bytes"),
            "bytes",
        )
    else:
        sent, unit, ref = m["census"]["values_per_device"], "values", reference.get("values_per_device")
        minimum = targets.get("comm_bound", ref)
    return _traffic_figure(unit, sent, minimum, ref, case)


def _traffic_figure(
    unit: str, sent: float | None, minimum: float | None, reference: float | None, case: Case
) -> TrafficFigure | None:
    """What ``case`` sent against the least it could, where both are known."""
    if sent is None or minimum is None:
        return None
    return {"kind": "traffic", "unit": unit, "sent": sent, "minimum": minimum, "reference": reference,
            "case": case.label()}  # fmt: skip


def _overlap_figure(correct: ArrayMeasured) -> OverlapFigure | None:
    """When the matmuls of the first right visible case could start, against a ring's."""
    case, m = next(((c, m) for c, m in correct if not c.hidden), (None, None))
    if case is None or m is None:
        return None
    steps, waits = _ring_size(case), m.get("matmul_waits", [])
    return {"kind": "overlap", "steps": steps, "waits": waits, "ok": not overlap_problem(waits, steps),
            "case": case.label()}  # fmt: skip


def _values(cases: ArrayMeasured) -> str:
    failures = [(c, m) for c, m in cases if not m["values"]["ok"]]
    if not failures:
        return ""
    case, measurement = failures[0]
    more = f" ({len(failures) - 1} more of {len(cases)} cases fail too)" if len(failures) > 1 else ""
    return f"{case.label()}: {measurement['values']['message']}{more}"


# What a visible part says of a hidden case that fails it: the kind of problem, never the case.
HIDDEN_PROBLEM = {
    "collectives": "it runs other collectives than this task allows, or not as often as it must",
    "communication": "it sends more than the least this task can send",
    "memory": "a device holds more of the returned state than its share",
    "peak memory": "a device needs more memory at the step's peak than the reference's does",
}


def _structure(correct: ArrayMeasured, problem_of: Callable[[Case, ArrayMeasurement], str], part: str) -> str:
    """The first right case, visible ones first, that the part finds a problem in."""
    if not correct:
        return "not checked until the values are right on at least one case"
    for case, measurement in sorted(correct, key=lambda cm: cm[0].hidden):
        problem = problem_of(case, measurement)
        if problem and case.hidden:
            return f"a hidden case: {HIDDEN_PROBLEM[part]}; check your function on other meshes, axes and dtypes"
        if problem:
            return f"{case.label()}: {problem}"
    return ""


def _gated(task: Task, correct: ArrayMeasured) -> str:
    """Communication counts only once the collectives are right: traffic sent through a
    collective the task forbids is not what it teaches."""
    collectives = "collectives" in task.points and correct
    if collectives and _structure(correct, lambda c, m: _collective_problem(task, c, m), "collectives"):
        return "not checked until the collectives are right (see the collectives part)"
    return ""


def _names(hlo_ops: Iterable[str]) -> str:
    return ", ".join(f"{op} ({HLO_TO_JAX[op]})" for op in sorted(hlo_ops))


def _targets(m: ArrayMeasurement) -> CaseTargets:
    return m.get("targets", {})


def _collective_problem(task: Task, case: Case, m: ArrayMeasurement) -> str:
    if task.axis_collectives:
        return _axes_problem(task, m["census"])
    ran = {op for op, n in m["census"]["counts"].items() if n}
    asked = {op for op, n in m["asked"].items() if n}
    if task.allowed is not None:
        allowed = {COLLECTIVES[name] for name in task.allowed}
        may = ", ".join(sorted(task.allowed)) or "no collectives"
        if ran - allowed:
            return f"the compiled HLO contains {_names(ran - allowed)}; {task.name} may use only {may}"
        if asked - allowed:
            return f"the program asks for {_names(asked - allowed)}; {task.name} may use only {may}"
    missing = {COLLECTIVES[name] for name in task.required} - ran
    if missing:
        return f"the compiled HLO has no {_names(missing)}; {task.name} must use it"
    problem = _count_problem(task, _targets(m), m["census"]["counts"])
    if problem or not task.overlapped:
        return problem
    return overlap_problem(m.get("matmul_waits", []), _ring_size(case))


def _axes_problem(task: Task, census: Census) -> str:
    """Per mesh axis: only the collectives the task allows on it, and at least one of them; a
    collective that spans no named axis on its own (or several at once) is not the task's."""
    rules = dict(task.axis_collectives)
    by_axes = census.get("by_axes", {})
    for axes, counts in sorted(by_axes.items()):
        ran = {op for op, n in counts.items() if n}
        allowed = {COLLECTIVES[name] for name in rules.get(axes, frozenset())}
        if ran - allowed:
            where = f"over {axes!r}" if axes else "within single devices"
            may = "; ".join(f"over {a!r} only {', '.join(sorted(ops))}" for a, ops in task.axis_collectives)
            return f"the compiled HLO runs {_names(ran - allowed)} {where}; {task.name} may run {may}"
    for axis, ops in task.axis_collectives:
        if not any(by_axes.get(axis, {}).get(COLLECTIVES[name], 0) for name in ops):
            return (f"the compiled HLO runs no {_names(COLLECTIVES[n] for n in ops)} over {axis!r}; "
                    f"{task.name} must, or {axis!r} does no work")  # fmt: skip
    return ""


def _count_problem(task: Task, targets: CaseTargets, counts: dict[str, int]) -> str:
    if "collective_counts" not in targets:
        return ""
    for name, want in sorted(targets["collective_counts"].items()):
        got = counts.get(COLLECTIVES[name], 0)
        if got != want:
            return (
                f"the compiled HLO runs {_names([COLLECTIVES[name]])} {got} times; "
                f"{task.name} must run it {want} times on this mesh"
            )
    return ""


def _communication_problem(task: Task, case: Case, m: ArrayMeasurement) -> str:
    census = m["census"]
    if census["values_per_device"] is None:
        loops = ", ".join(sorted(set(census["unbounded"])))
        return (
            f"{loops} runs inside a loop whose trip count XLA cannot determine, so what it "
            "sends cannot be bounded; use a Python loop or fori_loop with static bounds"
        )
    if _skips_neighbours(task, census):
        return _hops_problem(case, census)
    targets = _targets(m)
    if "comm_bytes" in targets:
        return _bytes_problem(task, targets, m)
    reference = m.get("reference_census")
    bound = targets.get("comm_bound", (reference or {}).get("values_per_device"))
    if bound is None or census["values_per_device"] <= bound + 1e-9:
        return ""
    what = "the minimum" if "comm_bound" in targets else "the reference's traffic"
    problem = f"sends {_traffic(census)} per device; {what} is {bound:g} values"
    if reference and "comm_bound" in targets:
        problem += f", and the reference sends {reference['values_per_device']:g}"
    return problem


def _ring_size(case: Case) -> int:
    """Devices on the ring of the case's axis (ring tasks all name one)."""
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]


def _skips_neighbours(task: Task, census: Census) -> bool:
    """A ring task one of whose ppermute pairs is more than one hop apart."""
    return task.neighbours_only and census.get("farthest_hops", 1) > 1


def _hops_problem(case: Case, census: Census) -> str:
    """A ring that sends past its neighbours: the same values cross more links of the network."""
    sent, links = census["values_per_device"], census["link_values_per_device"]
    return (
        f"sends to devices that are not its neighbours: a ppermute pair is {census['farthest_hops']} hops apart "
        f"on the ring of {case.axis!r}, so the {sent:g} values it sends per device travel {links:g} value-hops "
        f"(values x hops); a ring sends each value one hop, to a neighbour ({sent:g} value-hops)"
    )


def _bytes_problem(task: Task, targets: CaseTargets, m: ArrayMeasurement) -> str:
    """Traffic in bytes at the program's own dtypes: equal to the task's closed form, and no more
    than the reference's on the same mesh."""
    # Known here: the caller judges bytes only once the traffic is bounded (program_bytes is None
    # only when it is not).
    sent = cast(float, m["census"]["program_bytes"])
    closed = targets["comm_bytes"]
    reference = (m.get("reference_census") or {}).get("program_bytes")
    over_reference = reference is not None and sent > reference + 1e-9
    if not over_reference and math.isclose(sent, closed, rel_tol=1e-9, abs_tol=1e-9):
        return ""
    expected = f"the closed form for {task.name} is {closed:g} bytes"
    if "plan_bytes" in targets:  # a choice: name the cheapest plan, and every plan's figure
        plans = targets["plan_bytes"]
        each = ", ".join(f"{plan} {cost:g}" for plan, cost in plans.items())
        expected = f"for these sizes the cheapest plan is {min(plans, key=plans.__getitem__)}, {closed:g} bytes (bytes per plan: {each})"
    problem = f"sends {_bytes(m['census'])} per device; {expected}"
    if reference is not None:
        problem += f", and the reference sends {reference:g} bytes on the same mesh"
    return problem


def _bytes(census: Census) -> str:
    """Bytes at the program's dtypes, with the wire's figure where the backend widened them."""
    shown = f"{census['program_bytes']:g} bytes"
    if census["bytes_per_device"] != census["program_bytes"]:
        shown += f" ({census['bytes_per_device']:g} on this backend's wire, which widens narrow types)"
    return shown


def _traffic(census: Census) -> str:
    return f"{census['values_per_device']:g} values ({census['bytes_per_device']:g} bytes)"


def _memory_problem(task: Task, case: Case, m: ArrayMeasurement) -> str:
    """The returned state one device holds at rest against the task's closed form; the first leaf
    held in more than its share is named, with what it holds and what it should."""
    held = [(path, int(mine), int(whole)) for path, mine, whole in m["memory"]]
    total, whole_total = sum(h for _, h, _ in held), sum(w for _, _, w in held)
    closed = _targets(m)["memory_bytes"]
    if math.isclose(total, closed, rel_tol=1e-9):
        return ""
    share = closed / whole_total  # of each leaf, the part one device keeps
    path, mine, whole = next(((p, h, w) for p, h, w in held if h > share * w + 1e-9), held[0])
    what = "is held whole on every device" if mine == whole else "is held"
    return (
        f"{path} {what} ({mine} bytes per device); {task.name} keeps {_fraction(share)} of it "
        f"({share * whole:g} bytes): one device holds {total} bytes of the returned state, "
        f"the closed form is {closed:g}"
    )


# How far above the reference's peak a step may go: two right steps written differently differ a
# little in XLA's temporaries; a step that keeps a second copy of its state, or holds it whole,
# needs far more.
PEAK_SLACK = 0.10


def _peak_problem(m: ArrayMeasurement) -> str:
    """One device's memory at the step's peak (arguments, results and temporaries, less what is
    donated) against the reference's on the same mesh."""
    peak, reference = m.get("peak"), m.get("reference_peak")
    if peak is None or reference is None:
        return "this backend does not report a program's memory, so the peak cannot be judged"
    if peak <= reference * (1 + PEAK_SLACK):
        return ""
    return (
        f"one device needs {peak} bytes at the step's peak (its arguments, results and temporaries, less the "
        f"arguments it donates), {peak / reference:.2f}x the reference's {reference} bytes on the same mesh: "
        "donate the state the step replaces (donate_argnums) and keep every array sharded"
    )


def _memory_figure(task: Task, correct: ArrayMeasured) -> MemoryFigure | None:
    """Each returned leaf's bytes on one device against its share, for the first right visible
    case that holds too much."""
    for case, m in correct:
        if not case.hidden and _memory_problem(task, case, m):
            whole = sum(int(w) for _, _, w in m["memory"])
            share = _targets(m)["memory_bytes"] / whole
            leaves = [(path, int(held), share * int(size)) for path, held, size in m["memory"]]
            return {"kind": "memory", "leaves": leaves, "case": case.label()}
    return None


def _fraction(share: float) -> str:
    n = round(1 / share) if share else 0
    return f"1/{n}" if n and math.isclose(share * n, 1.0) else f"{share:.3g}"


def _passed_note(task: Task, part: str, measured: ArrayMeasured) -> str:
    """What a passed part measured, on the visible cases: a hidden case's figures would describe it."""
    shown = [m for c, m in measured if m["values"]["ok"] and not c.hidden]
    if not shown and part in ("communication", "memory", "peak memory"):
        return "judged on hidden cases only: no visible case's values are right"
    if part == "communication":
        sent = [(_bytes if "comm_bytes" in _targets(m) else _traffic)(m["census"]) for m in shown]
        return "sent per device: " + "; ".join(sent)
    if part == "memory":
        held = [sum(int(h) for _, h, _ in m["memory"]) for m in shown]
        return "returned state held per device: " + "; ".join(f"{b} bytes" for b in held)
    if part == "peak memory":
        return "peak per device: " + "; ".join(f"{m.get('peak')} bytes (the reference's {m.get('reference_peak')})"
                                               for m in shown)  # fmt: skip
    return ""
