"""Students whose programs are alike (``jaxcourse similar``): each graded function's exported
program, as grading kept its shape (``Report.programs``; ``core/program_shape.py``), compared
across the class. Names, comments and the order of independent lines do not count; what the
program computes does. The cells' text is compared too (``source_similarity.py``), and a pair
found by either measure is shown with both.

A pair is evidence only where two students are more alike than either is like the reference, and
their program is not one that much of the class shares (the obvious answer, or what the release
gives): identical to the reference is expected; identical to each other in a way no one else is,
is the signal. Nothing is decided: pairs are ranked for a person to read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from ...core.program_shape import likeness
from ..submission.report import Report
from .source_similarity import TextAlike, marked

SIDE_BY_SIDE = (
    "table{table-layout:fixed;width:100%}td:first-child,th:first-child{width:13em}"
    "pre{white-space:pre-wrap;margin:0;font-size:85%}mark{background:#fff8c5}"
)
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
    alike: list[Alike]  # functions whose programs are alike
    text: list[TextAlike] = field(default_factory=list)  # functions whose cells read alike

    @property
    def functions(self) -> list[str]:
        return sorted({a.function for a in self.alike} | {t.function for t in self.text})

    @property
    def rank(self) -> tuple[int, float]:
        """More functions alike first, then the more alike (by the stronger measure)."""
        strength = {a.function: a.likeness for a in self.alike}
        for t in self.text:
            strength[t.function] = max(strength.get(t.function, 0.0), t.share)
        return len(strength), sum(strength.values()) / len(strength)


def with_text(pairs: list[Pair], text: dict[tuple[str, str], list[TextAlike]]) -> list[Pair]:
    """The pairs either measure found, each with both measures' evidence, the most alike first."""
    by_students = {p.students: p for p in pairs}
    for students, alike in text.items():
        found = by_students.get(students, Pair(students, []))
        by_students[students] = Pair(students, found.alike, alike)
    return _ranked(by_students.values())


def _ranked(pairs: Any) -> list[Pair]:
    return sorted(pairs, key=lambda p: (-p.rank[0], -p.rank[1], p.students))


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
    return _ranked(Pair(students, alike) for students, alike in found.items())


def line(pair: Pair) -> str:
    """One line for the terminal: both students, then each function they wrote alike."""
    a, b = pair.students
    said = ", ".join(f"{function} ({'; '.join(_evidence(pair, function))})" for function in pair.functions)
    return f"{a}  {b}: {said}"


def _evidence(pair: Pair, function: str) -> list[str]:
    """What each measure found in one function, in words."""
    said = [
        f"{'the same program' if x.likeness == 1 else f'programs {x.likeness:.0%} alike'}, "
        f"{x.to_reference:.0%} like the reference"
        for x in pair.alike
        if x.function == function
    ]
    a, b = pair.students
    said += [
        f"text: {t.shares[0]:.0%} of {a}'s cell in {b}'s, {t.shares[1]:.0%} of {b}'s in {a}'s"
        for t in pair.text
        if t.function == function
    ]
    return said


def reference_programs(assignment: Any, course: Any) -> dict[str, list[str]]:
    """Each graded function's reference program, exported as the sandbox exports a student's, on
    as many simulated devices as the assignment's meshes need (JAX starts here)."""
    from ...core.mesh import MeshSpec, use_cpu_devices

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

    from ...core.program_shape import nodes
    from ...harness.calls import CALLS

    case = next(c for c in task.cases if not c.hidden)
    data = CALLS[task.kind].in_sandbox(fn, CALLS[task.kind].signature(task, case, assignment), {})
    if not isinstance(data, bytes):
        return None
    return nodes(jax.export.deserialize(bytearray(data)).mlir_module())


def solution_cells(notebook: Path, functions: list[str]) -> dict[str, str]:
    """The student's own cell for each of ``functions`` (the solution cell of that grade id); none
    from a notebook that cannot be read (its programs still count)."""
    from ..submission import notebooks as nbio

    try:
        nb = nbio.read(notebook)
    except Exception:  # a broken notebook shows no text; it was graded on what it exported
        return {}
    ids = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): str(c.source) for c in nb.cells}
    return {f: ids[f] for f in functions if f in ids}


def to_html(assignment: str, pairs: list[Pair], cells: dict[str, dict[str, str]]) -> str:
    """The pairs, most alike first, each function's two cells side by side (``cells``: student
    -> function -> cell), the passages found in both marked, every text escaped."""
    from html import escape

    from .class_report_html import STYLE

    blocks = []
    for pair in pairs:
        a, b = pair.students
        rows = "".join(_row(pair, function, cells) for function in pair.functions)
        blocks.append(
            f"<h2>{escape(a)} and {escape(b)}</h2><table><tr><th>function</th><th>{escape(a)}</th>"
            f"<th>{escape(b)}</th></tr>{rows}</table>"
        )
    body = "".join(blocks) or "<p>No two students wrote a function alike.</p>"
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(assignment)}: work alike</title>'
        f"<style>{STYLE}{SIDE_BY_SIDE}</style></head><body><h1>{escape(assignment)}: work alike</h1>"
        "<p>Pairs whose exported programs are more alike than either is like the reference and not shared by "
        "much of the class, or whose cells share text that neither the release nor much of the class wrote "
        f"(marked). Nothing is decided here: read both.</p>{body}</body></html>\n"
    )


def _row(pair: Pair, function: str, cells: dict[str, dict[str, str]]) -> str:
    from html import escape

    text = next((t for t in pair.text if t.function == function), None)
    sides = [
        marked(cells.get(student, {}).get(function, ""), text.spans[i] if text else [])
        for i, student in enumerate(pair.students)
    ]
    said = "<br>".join(escape(e) for e in _evidence(pair, function))
    return f"<tr><td>{escape(function)}<br>{said}</td><td><pre>{sides[0]}</pre></td><td><pre>{sides[1]}</pre></td></tr>"
