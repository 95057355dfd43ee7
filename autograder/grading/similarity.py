"""Students whose programs are alike (``jaxcourse similar``): each graded function's exported
program, as grading kept its shape (``Report.programs``; ``core/program_shape.py``), compared
across the class. Names, comments and the order of independent lines do not count; what the
program computes does.

A pair is evidence only where two students are more alike than either is like the reference, and
their program is not one that much of the class shares (the obvious answer, or what the release
gives): identical to the reference is expected; identical to each other in a way no one else is,
is the signal. Nothing is decided: pairs are ranked for a person to read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from ..core.program_shape import likeness
from .report import Report

THRESHOLD = 0.9  # at least this share of their program's nodes in common
COMMON = 1 / 3  # a program more than this share of the class wrote is no one's in particular


@dataclass(frozen=True)
class Alike:
    """One function two students wrote alike."""

    function: str
    likeness: float  # to each other
    to_reference: float  # the closer of the two to the reference


@dataclass(frozen=True)
class Pair:
    students: tuple[str, str]
    alike: list[Alike]

    @property
    def rank(self) -> tuple[int, float]:
        """More functions alike first, then the more alike."""
        return len(self.alike), sum(a.likeness for a in self.alike) / len(self.alike)


def similar_pairs(
    reports: list[Report], reference: dict[str, list[str]], threshold: float = THRESHOLD, common: float = COMMON
) -> list[Pair]:
    """Every pair of students with at least one function alike, the most alike first."""
    found: dict[tuple[str, str], list[Alike]] = {}
    functions = sorted({f for r in reports for f in r.programs})
    for function in functions:
        written = {r.student: r.programs[function] for r in reports if function in r.programs}
        shared = Counter(tuple(p) for p in written.values())
        everyone = {p for p, n in shared.items() if n >= 3 and n > common * len(written)}
        ref = reference.get(function, [])
        for a, b in combinations(sorted(written), 2):
            pa, pb = written[a], written[b]
            if tuple(pa) in everyone:
                continue
            alike = likeness(pa, pb)
            closest = max(likeness(pa, ref), likeness(pb, ref)) if ref else 0.0
            if alike >= threshold and alike > closest + 1e-9:
                found.setdefault((a, b), []).append(Alike(function, alike, closest))
    pairs = [Pair(students, alike) for students, alike in found.items()]
    return sorted(pairs, key=lambda p: (-p.rank[0], -p.rank[1], p.students))


def line(pair: Pair) -> str:
    """One line for the terminal: both students, then each function they wrote alike."""
    a, b = pair.students
    said = ", ".join(
        f"{x.function} ({'the same program' if x.likeness == 1 else f'{x.likeness:.0%} alike'}; "
        f"{x.to_reference:.0%} like the reference)"
        for x in pair.alike
    )
    return f"{a}  {b}: {said}"


def reference_programs(assignment: Any, course: Any) -> dict[str, list[str]]:
    """Each graded function's reference program, exported as the sandbox exports a student's, on
    as many simulated devices as the assignment's meshes need (JAX starts here)."""
    from ..core.mesh import MeshSpec, use_cpu_devices

    meshes = [MeshSpec.parse(c.mesh).size for t in assignment.tasks for c in t.cases if c.mesh]
    use_cpu_devices(max(meshes, default=1))
    found = {}
    for task in assignment.tasks:
        if task.kind in ("shard_map", "sharded_step"):
            program = exported_nodes(task, course.reference(assignment, task.name), assignment.name)
            if program is not None:
                found[task.name] = program
    return found


def exported_nodes(task: Any, fn: Callable[..., Any], assignment: str) -> list[str] | None:
    """``fn``'s program on the task's first visible case, exported as the sandbox exports a
    student's; None for a kind whose sandbox step hands back a value, not a program."""
    import jax

    from ..core.program_shape import nodes
    from ..harness.kinds import CALLS

    case = next(c for c in task.cases if not c.hidden)
    data = CALLS[task.kind].in_sandbox(fn, CALLS[task.kind].signature(task, case, assignment), {})
    if not isinstance(data, bytes):
        return None
    return nodes(jax.export.deserialize(bytearray(data)).mlir_module())


def solution_cell(notebook: Path, function: str) -> str:
    """The student's own cell for ``function`` (the solution cell of that grade id), or ""."""
    from . import notebooks as nbio

    try:
        nb = nbio.read(notebook)
    except Exception:  # a notebook that cannot be read shows no source; its program still counts
        return ""
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == function:
            return str(cell.source)
    return ""


def to_html(assignment: str, pairs: list[Pair], source: Callable[[str, str], str]) -> str:
    """The pairs, most alike first, each function's two cells side by side (``source(student,
    function)``), every text escaped."""
    from html import escape

    from .class_report_html import STYLE

    blocks = []
    for pair in pairs:
        a, b = pair.students
        rows = "".join(
            f"<tr><td>{escape(x.function)}<br>{x.likeness:.0%} alike, {x.to_reference:.0%} like the reference</td>"
            f"<td><pre>{escape(source(a, x.function))}</pre></td><td><pre>{escape(source(b, x.function))}</pre></td></tr>"
            for x in pair.alike
        )
        blocks.append(f"<h2>{escape(a)} and {escape(b)}</h2><table><tr><th>function</th><th>{escape(a)}</th>"
                      f"<th>{escape(b)}</th></tr>{rows}</table>")  # fmt: skip
    body = "".join(blocks) or "<p>No two students wrote a function more alike than they are like the reference.</p>"
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(assignment)}: programs alike</title>'
            f"<style>{STYLE}</style></head><body><h1>{escape(assignment)}: programs alike</h1>"
            "<p>Pairs whose exported programs are more alike than either is like the reference, and not shared by "
            f"much of the class. Nothing is decided here: read both.</p>{body}</body></html>\n")  # fmt: skip
