"""Self-checks: ``check(ring_all_gather)`` in a notebook judges a function as the grader does,
and ``jaxcourse check NOTEBOOK`` grades a saved notebook as the instructor will.

``check`` runs in the student's own kernel, on the task's visible cases, against the task's
public oracle (built on JAX's own collectives), with the same wrapper, measurements and verdicts
as the grader. ``hidden=True`` adds the hidden cases; that needs the instructor's solutions/.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.course import Course, CourseError
from ..core.errors import JaxcourseError
from ..core.records import Measurement, TestResult, fail
from ..core.tasks import Assignment, Case, Task, case_seed
from ..harness import python as python_calls
from ..harness import shard_map as harness
from ..harness.kinds import signature
from ..specs import ASSIGNMENTS, EXERCISES, get
from ..trusted import sharded_step as sharded_step_verdict
from ..trusted.inputs import make_inputs
from ..trusted.jobs import Measured
from ..trusted.kinds import score_task
from ..trusted.measure import compare_python, compare_values, execute, host_value
from ..trusted.training import layouts as layout_verdict
from ..trusted.training import step as step_verdict
from .report import Report
from .submissions import NotebookError, assignment_of, read


class CheckFailed(JaxcourseError, AssertionError):
    """A self-check found a problem; the message says what and where."""


@dataclass(repr=False)
class CheckResult:
    """What ``check`` found: one row per part of the task. Shown as a table in a notebook."""

    function: str
    tests: list[TestResult] = field(default_factory=list)
    attempted: bool = True

    @property
    def passed(self) -> bool:
        return self.attempted and all(t.status == "passed" for t in self.tests)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)

    def failures(self) -> dict[str, str]:
        return {t.name: t.message for t in self.tests if t.status != "passed"}

    def __repr__(self) -> str:
        if not self.attempted:
            return f"{self.function}: not attempted yet; replace `raise NotImplementedError()` and run this again"
        return format_results(self.tests)

    def _repr_html_(self) -> str:
        import html

        if not self.attempted:
            return f"<p>{html.escape(repr(self))}</p>"
        rows = "".join(
            f"<tr><td>{html.escape(t.name)}</td><td>{t.score:g}/{t.max_score:g}</td><td>{t.status}</td>"
            f"<td>{html.escape(t.message)}</td></tr>"
            for t in self.tests
        )
        return f"<table><tr><th>test</th><th>points</th><th>status</th><th>reason</th></tr>{rows}</table>"


def find_task(name: str) -> tuple[Assignment, Task]:
    for assignment in (*ASSIGNMENTS.values(), *EXERCISES.values()):
        for task in assignment.tasks:
            if task.name == name:
                return assignment, task
    raise CheckFailed(f"no graded function is called {name!r}; keep the name the exercise gives")


def check(
    fn: Callable[..., Any], *, hidden: bool = False, task: str | None = None, cases: Sequence[Case] | None = None
) -> CheckResult:
    """Judge ``fn`` on its task's cases: the result (a table in a notebook), or ``CheckFailed``
    with the reasons if any part fails.

    ``hidden=True`` (instructors: nbgrader's hidden test blocks) adds the hidden cases and judges
    against the reference solution instead of the oracle. ``task`` judges ``fn`` as another
    task's function (a variant with its own name), ``cases`` on other cases than the task's own.
    """
    assignment, found = find_task(task or str(getattr(fn, "__name__", "")))
    return _judge(assignment, found if cases is None else replace(found, cases=tuple(cases)), fn, hidden)


def _judge(assignment: Assignment, task: Task, fn: Callable[..., Any], hidden: bool) -> CheckResult:
    if hidden:
        course = Course.find()
        task = task.with_hidden(course.hidden_cases(assignment, task.name))
        lookup: Callable[[str], Any] = lambda name: course.reference(assignment, name)  # noqa: E731
    else:
        lookup = _ORACLES.setdefault(assignment.name, lambda name: assignment.task(name).oracle)
    measured = _measure(assignment, task, fn, lookup)
    result = CheckResult(task.name, score_task(task, measured))
    if assignment.name in EXERCISES and all(_not_attempted(m) for _, m in measured):
        # A lecture runs top to bottom before anyone has tried its exercises: say so, don't fail.
        result = CheckResult(task.name, [], attempted=False)
    if result.attempted and not result.passed:
        raise CheckFailed("\n".join(f"{name}: {message}" for name, message in result.failures().items()))
    return result


_ORACLES: dict[str, Callable[[str], Any]] = {}  # one lookup per assignment: its layout runs are reused


def _measure(assignment: Assignment, task: Task, fn: Callable[..., Any], lookup: Callable[[str], Any]) -> Measured:
    """The student's function on every case of ``task``, the way its kind is graded."""
    if task.kind == "training":
        return layout_verdict.self_check(task, task.cases, fn, lookup, assignment.name)
    if task.kind == "train_step":
        return step_verdict.self_check(task, task.cases, fn, lookup, lambda c: case_seed(assignment.name, task.name, c))
    reference = lookup(task.name)
    return [(case, _measure_case(assignment, task, case, fn, reference)) for case in task.cases]


def _measure_case(
    assignment: Assignment, task: Task, case: Case, fn: Callable[..., Any], reference: Callable[..., Any]
) -> Measurement:
    """The student's function first: an unfinished one is reported before the reference runs."""
    sig = signature(task, case, assignment.name)
    if sig["kind"] == "python":
        got = python_calls.call(fn, sig)
        if got.get("raises") == "NotImplementedError":
            return {"values": fail("raised NotImplementedError")}
        return {"values": compare_python(got, python_calls.call(reference, sig))}
    seed = case_seed(assignment.name, task.name, case)
    if sig["kind"] == "sharded_step":
        return sharded_step_verdict.self_check(fn, reference, sig, seed, task.tolerance_for(case.dtype))
    assert sig["kind"] == "shard_map"
    try:
        student_fn, _, mesh = harness.build(fn, sig)
        out, structure = execute(student_fn, make_inputs(sig, seed, mesh), mesh)
    except Exception as err:  # show the student their own error, in one line
        return {"values": fail(f"raised {type(err).__name__}: {str(err)[:400]}")}
    ref_fn, _, _ = harness.build(reference, sig)
    expected, dtype = host_value(execute(ref_fn, make_inputs(sig, seed, mesh), mesh)[0])
    values = compare_values(out, expected, dtype, task.tolerance_for(case.dtype), mesh)
    return {**structure, "values": values}


def _not_attempted(measured: Measurement) -> bool:
    return "raised NotImplementedError" in measured["values"]["message"]


def format_results(results: list[TestResult]) -> str:
    """A plain-text table: test, points, status, reason."""
    rows = [("test", "points", "status", "reason")]
    rows += [(r.name, f"{r.score:g}/{r.max_score:g}", r.status, r.message) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3] for row in rows)


def check_notebook(notebook: Path, assignment: str | None = None) -> Report:
    """Grade a saved notebook as the instructor will: with the course's solutions and hidden
    cases where this is the instructor's checkout, else on the visible cases and the oracles."""
    from .grader import grader_for

    nb = read(notebook)
    name = assignment or assignment_of(nb) or _by_filename(notebook)
    get(name)  # an unknown name fails here, with the known ones
    try:
        course: Course | None = Course.find(notebook.resolve().parent)
    except CourseError:
        course = None  # a student's copy: visible cases, public oracles
    return grader_for(name, course).grade("you", notebook)


def _by_filename(path: Path) -> str:
    for assignment in ASSIGNMENTS.values():
        if assignment.notebook == path.name:
            return assignment.name
    raise NotebookError(f"cannot tell which assignment {path.name} is for: pass --assignment")
