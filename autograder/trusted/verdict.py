"""The verdict on array and plain-Python tasks: per-case measurements against the task spec and
the reference's own measurements on the same case, giving scores and reasons (training tasks
have their own, in ``training/``).

A part is graded on what its program achieves, not on how it is spelled. Values come first: the
structural parts are judged only on cases whose values are right, so no point can be had without
computing correct outputs. Then **the technique** (``technique.py``): the collectives the part
allows (per mesh axis), a ring's sends to its neighbours only, a collective matmul's overlap, and
the program's resource signature (``records.ResourceSignature``: FLOPs, peak memory, bytes sent
over each set of mesh axes, what it holds after the call), each within the task's loose bound of
the reference's (``bounds.py``; past it, the program is another algorithm). Once the technique
holds, each other structural part holds one dimension to a tight bound: communication, memory at
rest, memory at the peak. A visible part judged on a hidden case names no hidden case: its message
says only that one fails, and how.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from ..core.records import ArrayMeasurement, Figure, SignatureTable, TestResult
from ..core.tasks import Case, Task
from . import explain
from .bounds import Problem, bounds_problem
from .jobs import Measured
from .technique import TECHNIQUE, technique_problem

# The array kinds' measurements, and the plain-Python kind's, which have values alone and are
# scored on values alone: this module is handed only those kinds.
ArrayMeasured = list[tuple[Case, ArrayMeasurement]]


def score(task: Task, measured: Measured) -> list[TestResult]:
    """Values first (visible, then hidden cases); the technique and the other structural parts
    only on the cases whose values are right, and those others only once the technique holds."""
    cases = cast(ArrayMeasured, measured)
    visible = [(c, m) for c, m in cases if not c.hidden]
    hidden = [(c, m) for c, m in cases if c.hidden]
    correct = [(c, m) for c, m in cases if m["values"]["ok"]]
    results = []
    for part in task.points:
        if part == "hidden values" and not hidden:
            continue  # a student's own check: hidden cases stay with the instructor
        detail = None
        if part == "values":
            problem, detail = _values(visible), _detail(visible)
        elif part == "hidden values":
            problem = _values(hidden)  # no detail: a hidden case's values stay with the instructor
        else:
            problem = _gated(task, part, correct) or _structure(correct, _judge(task, part))
        results.append(
            part_result(
                task,
                part,
                problem,
                "hidden" if part == "hidden values" else "visible",
                passed=explain.passed_note(task, part, cases),
                figure=explain.figure(task, part, visible, correct),
                signature=explain.signature_table(task, part, correct),
                detail=detail,
            )
        )
    return results


def part_result(
    task: Task,
    part: str,
    problem: str,
    visibility: str,
    passed: str = "",
    figure: Figure | None = None,
    signature: SignatureTable | None = None,
    detail: str | None = None,
) -> TestResult:
    """One part judged, for every kind: its points and "passed" (with ``passed`` as its note)
    where there is no problem, else zero, "failed" and the problem in the student's words, with
    ``detail`` (wrong values: where and how they differ) where there is one."""
    points = task.points[part]
    return TestResult(
        name=f"{task.name}: {part}",
        grade_id=task.grade_id,
        score=0.0 if problem else points,
        max_score=points,
        status="failed" if problem else "passed",
        message=problem or passed,
        visibility=visibility,
        figure=figure,
        signature=signature,
        detail=detail if problem else None,
    )


def _judge(task: Task, part: str) -> Callable[[Case, ArrayMeasurement], Problem | None]:
    if part == TECHNIQUE:
        return lambda c, m: technique_problem(task, c, m)
    return lambda c, m: bounds_problem(task, part, m)


def _values(cases: ArrayMeasured) -> str:
    failures = [(c, m) for c, m in cases if not m["values"]["ok"]]
    if not failures:
        return ""
    case, measurement = failures[0]
    more = f" ({len(failures) - 1} more of {len(cases)} cases fail too)" if len(failures) > 1 else ""
    return f"{case.label()}: {measurement['values']['message']}{more}"


def _detail(visible: ArrayMeasured) -> str | None:
    """The first wrong visible case's detail: where its values first differ, and how."""
    failures = [m for _, m in visible if not m["values"]["ok"]]
    return failures[0]["values"].get("detail") if failures else None


def _structure(correct: ArrayMeasured, problem_of: Callable[[Case, ArrayMeasurement], Problem | None]) -> str:
    """The first right case, visible ones first, that the part finds a problem in."""
    if not correct:
        return "not checked until the values are right on at least one case"
    for case, measurement in sorted(correct, key=lambda cm: cm[0].hidden):
        problem = problem_of(case, measurement)
        if problem and case.hidden:
            return f"a hidden case: {problem.hidden}; your visible cases pass, so look at what changes with the sizes"
        if problem:
            return f"{case.label()}: {problem.text}"
    return ""


def _gated(task: Task, part: str, correct: ArrayMeasured) -> str:
    """The other structural parts count only once the technique holds: a program that is another
    algorithm earns none of what the part teaches, however little it sends or holds."""
    if part == TECHNIQUE or TECHNIQUE not in task.points or not correct:
        return ""
    if _structure(correct, _judge(task, TECHNIQUE)):
        return "not checked until the technique holds (see the technique part)"
    return ""
