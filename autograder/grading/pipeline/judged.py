"""The stages of one submission's grading on the trusted side (``stages.py`` declares them all, in
order): each call measured against its reference record by the trusted worker, then the
measurements scored into the student's ``Report``, with each function's program shape and its
program at a realistic size beside them (reported, never scored)."""

from __future__ import annotations

from typing import Any, cast

from ...core.profile import Stopwatch
from ...core.records import ArrayMeasurement, Measurement, ProjectedMeasurement, ScaledProgram, TestResult
from ...trusted import reference as records
from ...trusted.jobs import Evaluation, waits
from ...trusted.judges import score_task
from ..submission.report import Report
from .handoff import Checked, Grading, Measured, Setup, Stop
from .plan import PlannedTest
from .trusted_worker import MeshDiffers, TrustedWorker, WorkerStopped, evaluation


def measure(grading: Grading, checked: Checked) -> Measured:
    """Measurements per test id, or a Stop with the reason the whole measurement failed."""
    setup, watch, results = grading.setup, grading.watch, checked.results
    with watch.phase("trusted: all"):
        with watch.phase("reference cache"):  # computed by the first submission, shared by the rest
            _ = setup.references
        entries = [
            evaluation(p, setup.references[p.id], results["tests"].get(p.id), cases_of(setup, p)) for p in setup.tests
        ]
        meshes, measured = results["meshes"], setup.measured
        done = measured.reused(entries, meshes)
        watch.count("measurements reused", len(done))
        worker = TrustedWorker(checked.work.root, setup.num_devices, setup.startup, setup.test_timeout)
        try:
            _measure_or_wait(setup, worker, _unanswered(entries, done), meshes, done, watch)
        except MeshDiffers as err:
            raise Stop("error", _mesh_mismatch(setup, str(err))) from None
        except WorkerStopped as err:  # its words may describe a hidden case's program: not shown then
            shown = "the grader's worker stopped early" if setup.ids(hidden=True) & set(err.pending) else str(err)
            raise Stop("error", shown) from None
        return Measured(done)


def _measure_or_wait(
    setup: Setup,
    worker: TrustedWorker,
    todo: list[Evaluation],
    meshes: dict[str, Any],
    done: dict[str, Measurement],
    watch: Stopwatch,
) -> None:
    """``todo`` measured into ``done``: what another submission is measuring now is waited for,
    after this one's own; what it could not measure is claimed and measured here."""
    measured = setup.measured
    while todo:
        claimed = measured.claim(todo, meshes)
        theirs = {e["id"] for e in claimed.theirs}
        # A program at scale whose cases another submission is measuring waits for their values.
        now: list[Evaluation] = []
        later: list[Evaluation] = []
        for entry in claimed.mine:
            (later if theirs & set(entry.get("after", [])) else now).append(entry)
        measured.release(later, meshes)
        try:
            done.update(worker.measure(now, meshes, measured, watch))
        finally:
            measured.release(now, meshes)
        if not claimed.theirs:
            return
        with watch.phase("trusted: another submission's programs"):
            found = measured.awaited(claimed.theirs, meshes, setup.startup + setup.test_timeout * len(theirs))
        watch.count("measurements reused", len(found))
        done.update(found)
        todo = _unanswered(claimed.theirs + later, done)


def _unanswered(entries: list[Evaluation], done: dict[str, Measurement]) -> list[Evaluation]:
    """``entries`` not in ``done``, less the programs at scale whose cases' values are wrong:
    each of those gets its waiting record in ``done`` (a wrong program's time ranks nothing)."""
    verdicts = {i: m["values"]["ok"] for i, m in done.items()}
    done.update({e["id"]: w for e in entries if e["id"] not in done and (w := waits(e.get("after", []), verdicts))})
    return [e for e in entries if e["id"] not in done]


def cases_of(setup: Setup, planned: PlannedTest) -> list[str]:
    """What a program at scale waits for: its function's cases (none for a case itself)."""
    if not planned.projected:
        return []
    return [p.id for p in setup.tests if p.task is planned.task and not p.projected]


def _mesh_mismatch(setup: Setup, message: str) -> str:
    """The worker's words name the mesh; a hidden case's mesh is not named to the student."""
    shown = {p.sig.get("mesh") for p in setup.tests if not p.case.hidden}
    named = message.removeprefix("jaxcourse: error: mesh ").split(":", 1)[0]
    if named in shown:
        return message
    return "jaxcourse: error: the sandbox ran a hidden case on another mesh than the grader's"


def score(grading: Grading, measured: Measured) -> Report:
    """The graded report: every task's parts, each case's measurement with its closed-form targets
    beside it, and each function's program shape and program at scale."""
    setup, found = grading.setup, measured.measurements
    return Report(
        grading.student,
        setup.assignment.name,
        "graded",
        "",
        _scored(setup, found),
        programs=_programs(setup, found),
        at_scale=_at_scale(setup, found),
    )


def _scored(setup: Setup, measured: dict[str, Measurement]) -> list[TestResult]:
    targets = {p.id: records.targets(setup.references[p.id]) for p in setup.tests if not p.projected}
    return [
        r
        for task in setup.tasks
        for r in score_task(
            task,
            [
                (p.case, {**measured[p.id], "targets": targets[p.id]})
                for p in setup.tests
                if p.task is task and not p.projected
            ],
        )
    ]


def _programs(setup: Setup, measured: dict[str, Measurement]) -> dict[str, list[str]]:
    """Each function's program shape, from the first of its visible cases that was measured."""
    found: dict[str, list[str]] = {}
    for p in setup.tests:
        program = cast(ArrayMeasurement, measured[p.id]).get("program")  # the array kinds' only
        if not p.case.hidden and not p.projected and program and p.task.name not in found:
            found[p.task.name] = program
    return found


def _at_scale(setup: Setup, measured: dict[str, Measurement]) -> dict[str, ScaledProgram]:
    """Each function's program at its realistic size beside the reference's, where it compiled
    there (trusted/projection.py): reported, never scored."""
    found: dict[str, ScaledProgram] = {}
    for p in setup.tests:
        m = cast(ProjectedMeasurement, measured[p.id])
        if p.projected and p.task.at_scale is not None and "cost" in m:
            found[p.task.name] = {
                "case": p.case.label(),
                "why": p.task.at_scale.why,
                "mesh": m["mesh"],
                "cost": m["cost"],
                "reference": m["reference_cost"],
            }
    return found
