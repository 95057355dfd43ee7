"""A program's resource signature against one part's bounds (``tasks.Bounds``): each dimension
(FLOPs, peak memory, bytes over each set of mesh axes, what it holds after the call) as a ratio to
the reference's on the same mesh and case, and the one furthest past its bound said in words, in
full for a visible case and without its figures for a hidden one."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..core.records import ArrayMeasurement, CaseTargets, Census, ResourceSignature
from ..core.tasks import Bound, Dimension, Task

UNBOUNDED_LOOP = "use a Python loop or fori_loop with static bounds"


@dataclass(frozen=True)
class Problem:
    """What a part found wrong in a case: in full for a visible case, and in words that describe
    no case for a hidden one."""

    text: str
    hidden: str
    excess: float = math.inf  # how far past its bound, as a ratio to it: a part says its worst


def bounds_problem(task: Task, part: str, m: ArrayMeasurement) -> Problem | None:
    """The dimension of the part's bounds that the program's signature goes furthest past."""
    bounds = task.bounds.get(part)
    if bounds is None:
        return None
    mine, theirs = m["signature"], m["reference_signature"]
    found = [_DIMENSIONS[dimension](bound, mine, theirs, m, targets(m)) for dimension, bound in bounds.items()]
    return max((p for p in found if p), key=lambda p: p.excess, default=None)


def _over(value: float, reference: float, bound: Bound) -> bool:
    """Above ``bound`` times the reference's; above nothing at all where the reference's is 0."""
    return value > bound.ratio * reference + 1e-9


def _excess(value: float, reference: float, bound: Bound) -> float:
    return value / (bound.ratio * reference) if reference else math.inf


def ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x"


def _flops_problem(
    bound: Bound, mine: ResourceSignature, theirs: ResourceSignature, m: ArrayMeasurement, targets: CaseTargets
) -> Problem | None:
    got, ref = mine["flops"], theirs["flops"]
    if got is None:
        text = f"runs matmuls inside a loop whose trip count XLA cannot determine, so its FLOPs cannot be bounded; {UNBOUNDED_LOOP}"
        return Problem(text, "its FLOPs cannot be bounded (a loop of unknown length)")
    if ref is None or not _over(got, ref, bound):
        return None
    if not ref:
        text = f"runs {got:,.0f} FLOPs of matmuls per device, where the reference runs none: {bound.why}"
    else:
        text = (
            f"runs {ratio(got, ref)} the reference's FLOPs per device ({got:,.0f} against {ref:,.0f} on the same "
            f"mesh; at most {bound.ratio:g}x): {bound.why}"
        )
    hidden = f"it runs more than {bound.ratio:g}x the reference's FLOPs per device: {bound.why}"
    return Problem(text, hidden, _excess(got, ref, bound))


def _peak_problem(
    bound: Bound, mine: ResourceSignature, theirs: ResourceSignature, m: ArrayMeasurement, targets: CaseTargets
) -> Problem | None:
    got, ref = mine["peak"], theirs["peak"]
    if got is None or ref is None:
        text = "this backend does not report a program's memory, so the peak cannot be judged"
        return Problem(text, text)
    if not _over(got, ref, bound):
        return None
    text = (
        f"needs {ratio(got, ref)} the reference's memory per device at its peak ({got:,} bytes of arguments, "
        f"results and temporaries, less what it donates, against {ref:,} on the same mesh; at most "
        f"{bound.ratio:g}x): {bound.why}"
    )
    hidden = f"it needs more than {bound.ratio:g}x the reference's memory per device at its peak: {bound.why}"
    return Problem(text, hidden, _excess(got, ref, bound))


def _traffic_problem(
    bound: Bound, mine: ResourceSignature, theirs: ResourceSignature, m: ArrayMeasurement, targets: CaseTargets
) -> Problem | None:
    """The set of mesh axes over which the program sends furthest past the reference's bytes."""
    got, ref = mine["traffic"], theirs["traffic"]
    if got is None:
        loops = ", ".join(sorted(set(m["census"]["unbounded"])))
        text = (
            f"{loops} runs inside a loop whose trip count XLA cannot determine, so what it sends cannot be "
            f"bounded; {UNBOUNDED_LOOP}"
        )
        return Problem(text, "what it sends cannot be bounded (a loop of unknown length)")
    if ref is None:
        return None
    over = [(axes, got.get(axes, 0.0), ref.get(axes, 0.0)) for axes in sorted(set(got) | set(ref))]
    over = [(axes, sent, least) for axes, sent, least in over if _over(sent, least, bound)]
    if not over:
        return None
    axes, sent, least = max(over, key=lambda o: _excess(o[1], o[2], bound))
    where = f"over {axes!r}" if axes else "within single devices"
    if not least:
        text = f"sends {sent:,.0f} bytes per device {where}, where the reference sends none: {bound.why}"
    else:
        text = (
            f"sends {ratio(sent, least)} the reference's bytes per device {where} ({sent:,.0f} against "
            f"{least:,.0f} on the same mesh; at most {bound.ratio:g}x{_wire(m['census'])}){_least(targets)}: "
            f"{bound.why}"
        )
    hidden = f"it sends more than {bound.ratio:g}x the reference's bytes {where}: {bound.why}"
    return Problem(text, hidden, _excess(sent, least, bound))


def _wire(census: Census) -> str:
    """Where the backend widened narrow types on the wire, what the wire carries (the bytes
    judged are at the program's own dtypes)."""
    wire, program = census.get("bytes_per_device"), census.get("program_bytes")
    if wire is None or program is None or math.isclose(wire, program):
        return ""
    return f"; this backend's wire carries {wire:,.0f} bytes in all, as it widens narrow types"


def _least(targets: CaseTargets) -> str:
    """The closed form of the least the case can send, where the task has one: the cheapest
    plan's, named, for a part that lets the student choose."""
    if "plan_bytes" in targets:
        plans = targets["plan_bytes"]
        each = ", ".join(f"{plan} {cost:g}" for plan, cost in plans.items())
        cheapest = min(plans, key=plans.__getitem__)
        return f"; for these sizes the cheapest plan is {cheapest}, {plans[cheapest]:g} bytes (bytes per plan: {each})"
    if "comm_bytes" in targets:
        return f"; the least it can send is {targets['comm_bytes']:g} bytes"
    return ""


def _resident_problem(
    bound: Bound, mine: ResourceSignature, theirs: ResourceSignature, m: ArrayMeasurement, targets: CaseTargets
) -> Problem | None:
    """What one device holds after the call; for a step, the first returned leaf it holds more of
    than the reference does."""
    got, ref = mine["resident"], theirs["resident"]
    if not _over(got, ref, bound):
        return None
    hidden = f"a device holds more than {bound.ratio:g}x the reference's results after the call: {bound.why}"
    leaves = list(zip(m.get("memory", []), m.get("reference_memory", [])))
    if not leaves:
        text = (
            f"holds {ratio(got, ref)} the reference's results per device after the call ({got:,} bytes "
            f"against {ref:,}; at most {bound.ratio:g}x): {bound.why}"
        )
        return Problem(text, hidden, _excess(got, ref, bound))
    (path, held, whole), (_, kept, _) = next(
        ((mine_leaf, ref_leaf) for mine_leaf, ref_leaf in leaves if mine_leaf[1] > ref_leaf[1]), leaves[0]
    )
    what = "is held whole on every device" if held == whole else "is held"
    text = (
        f"{path} {what} ({held} bytes per device); the reference keeps {fraction(kept / whole)} of it "
        f"({kept} bytes): one device holds {got} bytes of the returned state, {ratio(got, ref)} the reference's "
        f"{ref} (at most {bound.ratio:g}x): {bound.why}"
    )
    return Problem(text, hidden, _excess(got, ref, bound))


DimensionJudge = Callable[[Bound, ResourceSignature, ResourceSignature, ArrayMeasurement, CaseTargets], Problem | None]
_DIMENSIONS: dict[Dimension, DimensionJudge] = {
    "flops": _flops_problem,
    "peak": _peak_problem,
    "traffic": _traffic_problem,
    "resident": _resident_problem,
}


def targets(m: ArrayMeasurement) -> CaseTargets:
    return m.get("targets", {})


def fraction(share: float) -> str:
    n = round(1 / share) if share else 0
    return f"1/{n}" if n and math.isclose(share * n, 1.0) else f"{share:.3g}"
