"""The technique part's rules beside the signature: only the collectives a task allows (per mesh
axis where it names axes), a ring's sends to its neighbours only, and a collective matmul's
overlap; then the signature within the technique's loose bounds (``bounds.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from ..core.dataflow import overlap_problem
from ..core.records import ArrayMeasurement, Census
from ..core.tasks import COLLECTIVES, HLO_TO_JAX, Case, Task
from .bounds import Problem, bounds_problem

TECHNIQUE = "technique"


def technique_problem(task: Task, case: Case, m: ArrayMeasurement) -> Problem | None:
    """The collectives the task allows, a ring's neighbours, the signature within the technique's
    bounds, and a collective matmul's overlap, in that order."""
    problem = _collective_problem(task, m) or _hops_problem(task, case, m["census"])
    if problem:
        return problem
    bounded = bounds_problem(task, TECHNIQUE, m)
    if bounded or not task.overlapped:
        return bounded
    overlap = overlap_problem(m.get("matmul_waits", []), ring_size(case))
    return Problem(overlap, "its matmuls wait for more transfers than a ring's") if overlap else None


def _collective_problem(task: Task, m: ArrayMeasurement) -> Problem | None:
    if task.axis_collectives:
        return _axes_problem(task, m["census"])
    ran = {op for op, n in m["census"]["counts"].items() if n}
    asked = {op for op, n in m["asked"].items() if n}
    if task.allowed is None:
        return None
    allowed = {COLLECTIVES[name] for name in task.allowed}
    if ran - allowed:
        text = f"the compiled HLO contains {_names(ran - allowed)}"
    elif asked - allowed:
        text = f"the program asks for {_names(asked - allowed)}"
    else:
        return None
    if not task.allowed:
        return Problem(
            f"{text}; {task.name} may use no collectives", f"it runs collectives, and {task.name} may use none"
        )
    may = ", ".join(sorted(task.allowed))
    return Problem(
        f"{text}; {task.name} may use only {may}", f"it runs other collectives than {task.name} allows ({may})"
    )


def _axes_problem(task: Task, census: Census) -> Problem | None:
    """Per mesh axis, only the collectives the task allows on it; a collective that spans no
    named axis on its own (or several at once) is not the task's."""
    rules = dict(task.axis_collectives)
    for axes, counts in sorted(census.get("by_axes", {}).items()):
        ran = {op for op, n in counts.items() if n}
        allowed = {COLLECTIVES[name] for name in rules.get(axes, frozenset())}
        if ran - allowed:
            where = f"over {axes!r}" if axes else "within single devices"
            may = "; ".join(f"over {a!r} only {', '.join(sorted(ops))}" for a, ops in task.axis_collectives)
            text = f"the compiled HLO runs {_names(ran - allowed)} {where}; {task.name} may run {may}"
            return Problem(text, f"it runs collectives over axes that {task.name} does not allow them on ({may})")
    return None


def _names(hlo_ops: Iterable[str]) -> str:
    return ", ".join(f"{op} ({HLO_TO_JAX[op]})" for op in sorted(hlo_ops))


def ring_size(case: Case) -> int:
    """Devices on the ring of the case's axis (ring tasks all name one)."""
    return case.mesh_spec.axis_sizes[cast(str, case.axis)]


def skips_neighbours(task: Task, census: Census) -> bool:
    """A ring task one of whose ppermute pairs is more than one hop apart."""
    return task.neighbours_only and census.get("farthest_hops", 1) > 1


def _hops_problem(task: Task, case: Case, census: Census) -> Problem | None:
    """A ring that sends past its neighbours: the same values cross more links of the network."""
    if not skips_neighbours(task, census):
        return None
    sent, links = census["values_per_device"], census["link_values_per_device"]
    text = (
        f"sends to devices that are not its neighbours: a ppermute pair is {census['farthest_hops']} hops apart "
        f"on the ring of {case.axis!r}, so the {sent:g} values it sends per device travel {links:g} value-hops "
        f"(values x hops); a ring sends each value one hop, to a neighbour ({sent:g} value-hops)"
    )
    return Problem(text, "it sends to devices that are not its neighbours on the ring")
