"""Self-checks: ``check(ring_all_gather)`` in a notebook judges a function as the grader does,
and ``jaxcourse check NOTEBOOK`` grades a saved notebook as the instructor will.

``check`` runs in the student's own kernel, on the task's visible cases, and goes the grader's
way: the function is exported as the sandbox exports it, and the export measured as the trusted
worker measures it, against each case's reference record. A student's copy holds no reference:
those records are data, shipped with the course (``expected.py``). In the instructor's checkout
they are made from the solutions; ``hidden=True`` (nbgrader's hidden test blocks) adds the
hidden cases, which only the instructor has.
"""

from __future__ import annotations

import html
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...core.course import Course, CourseError
from ...core.errors import JaxcourseError
from ...core.mesh import MeshSpec, default_device_count
from ...core.protocol import PlannedCall
from ...core.records import Measurement, TestResult
from ...core.tasks import Assignment, Case, Task
from ...specs import ASSIGNMENTS, EXERCISES, get
from ...trusted import reference as records
from ...trusted.jobs import Measured
from ...trusted.judges import JUDGES, score_task
from ...untrusted.runner import run_test
from ..pipeline import expected
from ..pipeline.grader import DEFAULT_TEST_TIMEOUT, DEFAULT_TIMEOUT, NoReferences, provider_for
from ..pipeline.plan import PlannedTest, plan
from ..pipeline.references import Provider, ReferenceFailed, ensure
from ..pipeline.trusted_worker import evaluation
from ..reports import figures, signature_view
from ..reports.feedback import detail_html
from ..sandbox.local import ProcessSandbox
from ..submission.notebooks import NotebookError, assignment_of, read
from ..submission.report import Report


class CheckFailed(JaxcourseError, AssertionError):
    """A self-check found a problem; the message says what and where.

    In a notebook the error is one line (IPython shows ``_render_traceback_`` instead of a stack
    trace): the verdict above it says the rest. ``str()`` keeps every failing part's reason."""

    def __init__(self, message: str, headline: str | None = None) -> None:
        super().__init__(message)
        self.headline = headline or message.splitlines()[0]

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self.headline}"]


@dataclass(repr=False)
class CheckResult:
    """What ``check`` found: one row per part of the task, shown the same way whether it passed
    or failed: the table, each technique part's signature beside the reference's, the pictures.
    ``points`` is the whole cell's, hidden values included, which only the instructor's grading
    judges."""

    function: str
    tests: list[TestResult] = field(default_factory=list)
    attempted: bool = True
    points: float | None = None

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

    def headline(self) -> str:
        """One line: the points this check judged, and which parts fail or that all pass."""
        failing = [name.split(": ", 1)[-1] for name in self.failures()]
        said = f"{self.function}: {self.score:g} of {self.max_score:g} points"
        if not failing:
            return f"{said}; every part passes"
        if any("raised NotImplementedError" in message for message in self.failures().values()):
            return f"{said}; not written yet: it raises NotImplementedError"
        return f"{said}; {', '.join(failing)} {'fails' if len(failing) == 1 else 'fail'} (the table says why)"

    def points_note(self) -> str:
        """How many of the cell's points this check judged; the rest are the hidden cases'."""
        rest = (self.points or self.max_score) - self.max_score
        if rest <= 0:
            return f"This check judged all {self.max_score:g} of the cell's points."
        return (
            f"This check judged {self.max_score:g} of the cell's {self.max_score + rest:g} points; the other "
            f"{rest:g} (hidden values: other meshes, shapes and inputs) are judged only in your instructor's grading."
        )

    def __repr__(self) -> str:
        if not self.attempted:
            return f"{self.function}: not attempted yet; replace `raise NotImplementedError()` and run this again"
        return f"{self.headline()}\n{self.points_note()}\n\n{format_results(self.tests)}"

    def _repr_html_(self) -> str:
        if not self.attempted:
            return f"<p>{html.escape(repr(self))}</p>"
        colour = {"passed": "#1a7f37", "failed": "#cf222e"}
        rows = "".join(
            f"<tr><td {_LEFT}>{html.escape(t.name)}</td><td {_LEFT}>{t.score:g}/{t.max_score:g}</td>"
            f"<td style='{_ALIGN};color:{colour.get(t.status, '#57606a')};font-weight:bold'>{html.escape(t.status)}</td>"
            f"<td {_LEFT}>{html.escape(t.message)}{detail_html(t)}</td></tr>"
            for t in self.tests
        )
        signatures = "".join(signature_view.to_html(table) for _, table in signature_view.tables(self.tests))
        pictures = "".join(
            f"<figure><figcaption>{html.escape(t.name)}</figcaption>{figures.svg(t.figure)}</figure>"
            for t in self.tests
            if t.figure and t.visibility == "visible"
        )
        head = "".join(f"<th {_LEFT}>{h}</th>" for h in ("part", "points", "status", "reason"))
        summary = f"<p><b>{html.escape(self.headline())}</b><br>{html.escape(self.points_note())}</p>"
        table = f"<table class='verdict'><tr>{head}</tr>{rows}</table>"
        return f"<div class='jaxcourse-verdict'>{summary}{table}{signatures}{pictures}</div>"


# JupyterLab right-aligns a table's cells: words read better from the left.
_ALIGN = "text-align:left;vertical-align:top"
_LEFT = f"style='{_ALIGN}'"


def show(result: CheckResult) -> None:
    """Display ``result`` where the student is: rendered in a notebook or IPython, as text in a
    plain terminal."""
    if _in_ipython():
        from IPython.display import display

        display(result)
    else:
        sys.stdout.write(f"{result!r}\n")


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # a bare environment: no notebook to display in
        return False
    return get_ipython() is not None


def find_task(name: str) -> tuple[Assignment, Task]:
    for assignment in (*ASSIGNMENTS.values(), *EXERCISES.values()):
        for task in assignment.tasks:
            if task.name == name:
                return assignment, task
    raise CheckFailed(f"no graded function is called {name!r}; keep the name the exercise gives")


def check(
    fn: Callable[..., Any], *, hidden: bool = False, task: str | None = None, cases: Sequence[Case] | None = None
) -> CheckResult:
    """Judge ``fn`` on its task's cases: the result (a table in a notebook). If any part fails, the
    same verdict is displayed and ``CheckFailed`` raised, one line in a notebook, so that
    nbgrader's Validate marks the cell failed.

    ``hidden=True`` (instructors: nbgrader's hidden test blocks) adds the hidden cases. ``task``
    judges ``fn`` as another task's function (a variant with its own name); ``cases`` on some of
    the task's cases only (each must be one the course has a record of).
    """
    result = judge(fn, hidden=hidden, task=task, cases=cases)
    if result.attempted and not result.passed:
        show(result)  # the whole verdict, as a pass shows it; then one line of error
        reasons = "\n".join(f"{name}: {message}" for name, message in result.failures().items())
        raise CheckFailed(reasons, headline=result.headline())
    return result


def judge(
    fn: Callable[..., Any], *, hidden: bool = False, task: str | None = None, cases: Sequence[Case] | None = None
) -> CheckResult:
    """``check``'s verdict, every part's score and reason, without raising for a failed part."""
    assignment, found = find_task(task or str(getattr(fn, "__name__", "")))
    provider = records_provider(assignment, hidden)
    if hidden:
        found = found.with_hidden(provider.hidden_cases(found))
    if cases is not None:
        found = replace(found, cases=tuple(cases))
    return _judge(assignment, found, fn, provider)


def records_provider(assignment: Assignment, hidden: bool) -> Provider:
    """The image's shipped records; else the instructor's solutions, unsalted (the inputs a
    student's check meets), where this is the instructor's checkout; else the course's records."""
    course: Course | None = None
    if not os.environ.get(expected.ENV):
        try:
            course = Course.find()
        except CourseError:
            course = None
    if hidden and (course is None or not course.has_solutions(assignment)):
        raise CheckFailed("the hidden cases stay with the instructor: check(fn) runs the visible ones")
    try:
        return provider_for(assignment, course, salted=False)
    except NoReferences:
        raise CheckFailed(
            f"no records to check {assignment.name} against: this copy of the course lacks them "
            f"(the instructor's `jaxcourse release` makes them; {expected.ENV} names their folder)"
        ) from None


def _judge(assignment: Assignment, task: Task, fn: Callable[..., Any], provider: Provider) -> CheckResult:
    # Not at scale: a notebook's check stays quick; probe(fn, at_scale=True) projects a function.
    tests = plan(assignment.name, (task,), provider.salt, provider.targets, at_scale=False)
    try:
        references = reference_records(provider, tests)
    except ReferenceFailed as err:
        raise CheckFailed(str(err)) from None
    namespace = {**getattr(fn, "__globals__", {}), task.name: fn}
    measured: Measured = []
    with tempfile.TemporaryDirectory(prefix="jaxcourse-check-") as work:
        for test in tests:
            measurement = _measure(test, namespace, references[test.id], Path(work))
            measurement["targets"] = records.targets(references[test.id])
            measured.append((test.case, measurement))
    result = CheckResult(task.name, score_task(task, measured), points=task.max_score)
    if assignment.name in EXERCISES and all(_not_attempted(m) for _, m in measured):
        # A lecture runs top to bottom before anyone has tried its exercises: say so, don't fail.
        result = CheckResult(task.name, [], attempted=False)
    return result


def reference_records(provider: Provider, tests: list[PlannedTest]) -> dict[str, str]:
    """Each test's reference record (its path prefix): shipped, or made and kept by an instructor's check."""
    return ensure(provider, tests, _cache(provider), _devices(tests), DEFAULT_TIMEOUT)


def _measure(test: PlannedTest, namespace: dict[str, Any], reference: str, work: Path) -> Measurement:
    """The function exported as the sandbox exports it, then measured as the trusted worker
    measures an export: the student's own error, if any, in one line. Wrong values on a visible
    case come with a few expected values beside hers: its inputs are unsalted, the ones she can
    make, and its record ships with the course (a grading's are salted, and show none)."""
    call: PlannedCall = {"id": test.id, "sig": test.sig, "index": 0, "timeout": DEFAULT_TEST_TIMEOUT}
    artifacts: dict[str, bytes] = {}
    result = run_test(call, namespace, artifacts)
    if result.get("status") == "exported":
        path = work / f"{test.id.replace('/', '-')}.jaxexport"
        path.write_bytes(artifacts[result["artifact"]])
        result = {**result, "artifact": str(path)}
    entry = evaluation(test, reference, result)
    entry["sample"] = not test.case.hidden
    return JUDGES[test.task.kind].measure(entry)


def _cache(provider: Provider) -> Path:
    """Where an instructor's own checks keep the records they make (the release's folder)."""
    root = provider.course.nbgrader_root if provider.course is not None else Path(tempfile.gettempdir())
    return root / ".jaxcourse" / "reference" / expected.folder_name(provider.assignment)


def _devices(tests: list[PlannedTest]) -> int:
    return max([default_device_count()] + [MeshSpec.parse(t.case.mesh).size for t in tests])


def _not_attempted(measured: Measurement) -> bool:
    return "raised NotImplementedError" in measured["values"]["message"]


def format_results(results: list[TestResult]) -> str:
    """A plain-text table: test, points, status, reason; then each technique part's signature
    beside the reference's."""
    rows = [("test", "points", "status", "reason")]
    rows += [(r.name, f"{r.score:g}/{r.max_score:g}", r.status, r.message) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    table = "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3] for row in rows)
    details = [
        f"{r.name}, where the values differ:\n" + "\n".join(f"  {line}" for line in detail.splitlines())
        for r in results
        if (detail := r.detail)
    ]
    return "\n\n".join([table, *details, *filter(None, [signature_view.text(results), figures.text(results)])])


def check_notebook(notebook: Path, assignment: str | None = None) -> Report:
    """Grade a saved notebook as the instructor will: with the course's solutions and hidden
    cases where this is the instructor's checkout, else on the visible cases and their shipped
    records."""
    from ..pipeline.grader import grader_for

    nb = read(notebook)
    name = assignment or assignment_of(nb) or _by_filename(notebook)
    get(name)  # an unknown name fails here, with the known ones
    try:
        course: Course | None = Course.find(notebook.resolve().parent)
    except CourseError:
        course = None  # a student's copy: visible cases, shipped records
    try:
        grader = grader_for(name, course, sandbox=ProcessSandbox())
    except NoReferences:
        checkout = course.root if course is not None else expected.installed_checkout()
        where = f"in the course's checkout ({checkout})" if checkout is not None else "in the course's checkout"
        raise CheckFailed(
            f"no records to check {name} against: run `jaxcourse release` {where} to make them, "
            f"or set {expected.ENV} to the folder that holds them"
        ) from None
    return grader.grade("you", notebook)


def _by_filename(path: Path) -> str:
    for assignment in ASSIGNMENTS.values():
        if assignment.notebook == path.name:
            return assignment.name
    raise NotebookError(f"cannot tell which assignment {path.name} is for: pass --assignment")
