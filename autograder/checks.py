"""Self-checks for notebooks: ``check(ring_all_gather)`` judges a function as the grader does.

It runs in the student's own kernel, on the task's visible cases, against the task's public
oracle (built on JAX's own collectives), with the same wrapper, measurements and verdicts as the
grader. ``hidden=True`` adds the hidden cases; that needs the instructor's solutions/ directory.
"""

from __future__ import annotations

from typing import Any, Callable

from . import harness
from .compare import TestResult, score_task
from .inputs import make_inputs
from .measure import compare_python, compare_values, execute, host_value
from .specs import ASSIGNMENTS, EXERCISES
from .tasks import Assignment, Case, Task, case_seed


class CheckFailed(AssertionError):
    """A self-check found a problem; the message says what and where."""


def find_task(name: str) -> tuple[Assignment, Task]:
    for assignment in (*ASSIGNMENTS.values(), *EXERCISES.values()):
        for task in assignment.tasks:
            if task.name == name:
                return assignment, task
    raise CheckFailed(f"no graded function is called {name!r}; keep the name the exercise gives")


def check(fn: Callable[..., Any], *, hidden: bool = False, quiet: bool = False) -> None:
    """Judge ``fn`` on its task's cases; raise ``CheckFailed`` with the reasons if any part fails.

    ``hidden=True`` (instructors: nbgrader's hidden test blocks) adds the hidden cases and judges
    against the reference solution instead of the oracle.
    """
    assignment, task = find_task(getattr(fn, "__name__", ""))
    reference = task.oracle
    if hidden:
        from .course import Course

        course = Course.find()
        task = task.with_hidden(course.hidden_cases(assignment, task.name))
        reference = course.reference(assignment, task.name)
    if task.kind in ("training", "train_step"):
        measured = _measure_training(assignment, task, fn, hidden)
    else:
        measured = [(case, _measure(assignment, task, case, fn, reference)) for case in task.cases]
    if assignment.name in EXERCISES and all(_not_attempted(m) for _, m in measured):
        # A lecture runs top to bottom before anyone has tried its exercises: say so, don't fail.
        print(f"{task.name}: not attempted yet; replace `raise NotImplementedError()` and run this again")
        return
    results = score_task(task, measured)
    if not quiet:
        print(format_results(results))
    failed = [r for r in results if r.status != "passed"]
    if failed:
        raise CheckFailed("\n".join(f"{r.name}: {r.message}" for r in failed))


def _measure(
    assignment: Assignment, task: Task, case: Case, fn: Callable[..., Any], reference: Callable[..., Any]
) -> dict[str, Any]:
    """The student's function first: an unfinished one is reported before the reference runs."""
    sig = harness.signature(task, case)
    if task.kind == "python":
        got = harness.call_python(fn, sig)
        if got.get("raises") == "NotImplementedError":
            return {"values": {"ok": False, "message": "raised NotImplementedError"}}
        return {"values": compare_python(got, harness.call_python(reference, sig))}
    seed = case_seed(assignment.name, task.name, case)
    try:
        student_fn, _, mesh = harness.build(fn, sig)
        out, structure = execute(student_fn, make_inputs(sig, seed, mesh), mesh)
    except Exception as err:  # show the student their own error, in one line
        return {"values": {"ok": False, "message": f"raised {type(err).__name__}: {str(err)[:400]}"}}
    ref_fn, _, _ = harness.build(reference, sig)
    expected, dtype = host_value(execute(ref_fn, make_inputs(sig, seed, mesh), mesh)[0])
    values = compare_values(out, expected, dtype, task.tolerance_for(case.dtype), mesh)
    return {"values": values, **structure}


def _measure_training(assignment: Assignment, task: Task, fn: Callable[..., Any], hidden: bool) -> Any:
    """Training tasks run the notebook's functions in several processes; every graded function
    of the assignment takes part, so references are looked up by name."""
    from .training_verdict import self_check

    if hidden:
        from .course import Course

        course = Course.find()
        lookup = lambda name: course.reference(assignment, name)  # noqa: E731
    else:
        lookup = _ORACLES.setdefault(assignment.name, lambda name: assignment.task(name).oracle)
    return self_check(task, task.cases, fn, lookup, lambda case: case_seed(assignment.name, task.name, case))


_ORACLES: dict[str, Callable[[str], Callable[..., Any]]] = {}  # one lookup per assignment: its runs are reused


def _not_attempted(measured: dict[str, Any]) -> bool:
    return "raised NotImplementedError" in measured["values"]["message"]


def format_results(results: list[TestResult]) -> str:
    """A plain-text table: test, points, status, reason."""
    rows = [("test", "points", "status", "reason")]
    rows += [(r.name, f"{r.score:g}/{r.max_score:g}", r.status, r.message) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3] for row in rows
    )
