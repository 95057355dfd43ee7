"""Grade one submission: the sandbox runs and exports, the trusted worker measures, the kind's
verdict scores.

One ``Grader`` per assignment holds what every submission shares (tasks, planned tests,
cached reference results); ``Grader.grade`` handles one notebook and never raises for a
student's fault: whatever goes wrong becomes a status and a message on that student's report.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from pathlib import Path
from typing import Any, cast

from ... import specs
from ...core.course import Course
from ...core.errors import JaxcourseError
from ...core.files import write_atomic
from ...core.mesh import MeshSpec, default_device_count
from ...core.profile import Stopwatch
from ...core.protocol import (
    CELLS,
    PLAN,
    Cell,
    Plan,
    PlannedCall,
    Results,
)
from ...core.records import ArrayMeasurement, Measurement, ProjectedMeasurement, ScaledProgram, TestResult
from ...core.tasks import Assignment, Task
from ...harness.layouts import layout_label
from ...trusted import reference as records
from ...trusted.jobs import waits
from ...trusted.judges import score_task
from ..sandbox import limits
from ..sandbox.package import UNTRUSTED_SIDE, code_text
from ..sandbox.sandbox import CompileCache, Sandbox
from ..sandbox.scratch import scratch
from ..submission import notebooks as nbio
from ..submission.report import Report
from . import expected, references
from .measured import MeasuredPrograms
from .plan import PlannedTest, plan
from .references import Provider
from .stages import Stop, Workspace, read_results, run_sealed
from .trusted_worker import MeshDiffers, TrustedWorker, WorkerStopped, evaluation

DEFAULT_TIMEOUT = 300.0  # seconds for one submission's cells and exports
DEFAULT_TEST_TIMEOUT = 60.0  # seconds for one export in the sandbox, or one run when measured
EVALUATOR_STARTUP = 60.0  # seconds the trusted worker may take to start before its first test
HIDDEN_WAIT = 60.0  # seconds the runner waits for the hidden cases once its visible ones are out


class Grader:
    """Everything one assignment's submissions share. The reference results are computed on
    first use (the first ``grade``), not when the grader is made."""

    def __init__(
        self,
        provider: Provider,
        cache: Path,
        timeout: float = DEFAULT_TIMEOUT,
        test_timeout: float = DEFAULT_TEST_TIMEOUT,
        startup: float = EVALUATOR_STARTUP,
        sandbox: Sandbox | None = None,
        at_scale: bool = True,
    ) -> None:
        self.assignment = assignment = provider.assignment
        self.tasks = tuple(t.with_hidden(provider.hidden_cases(t)) for t in assignment.tasks)
        # at_scale: each function's program at its realistic size too (reported, never scored)
        self.tests = plan(assignment.name, self.tasks, provider.salt, provider.targets, at_scale)
        self.num_devices = max([default_device_count()] + [MeshSpec.parse(p.case.mesh).size for p in self.tests])
        self.timeout, self.test_timeout, self.startup = timeout, test_timeout, startup
        self.source = self._source(provider.course)
        self.provider, self.cache = provider, cache
        self._references: dict[str, str] | None = None
        self._references_lock = threading.Lock()
        self._sandbox_cache: CompileCache | None = None
        self._sandbox_cache_lock = threading.Lock()
        jobs = [{"id": p.id, "sig": p.sig, "seed": p.seed, "targets": p.targets} for p in self.tests]
        # A report stays valid while the notebook, the reference, the cases and the package's
        # own code are all unchanged.
        self.fingerprint_base = provider.source_text + json.dumps(jobs, sort_keys=True) + code_text()
        # None: a grader that identifies submissions and reports on those no grader can read
        # (the hub's grading service, formgrader, a queue's dispatcher) but runs none of them.
        self.sandbox = sandbox
        # Compiled programs, reused when two submissions export the same program; written and
        # read by the trusted worker only. The same program on the same test is measured once.
        self.compile_cache = cache / "xla"
        self.measured = MeasuredPrograms(cache / "measured")

    def _box(self) -> Sandbox:
        if self.sandbox is None:
            raise JaxcourseError(
                f"this grader of {self.assignment.name} was made without a sandbox: it runs no notebook"
            )
        return self.sandbox

    @property
    def references(self) -> dict[str, str]:
        """Each test's reference record (a path prefix), computed once, when first needed."""
        with self._references_lock:  # a class grades several submissions at once
            if self._references is None:
                self._references = references.ensure(
                    self.provider, self.tests, self.cache, self.num_devices, self.timeout
                )
        return self._references

    @property
    def sandbox_cache(self) -> CompileCache | None:
        """The class's compile cache for the sandbox, filled on first use by running the
        notebook's public cells (no solution, no test) in the sandbox itself; read-only after.
        Without the source notebook (a student's own check) and a sandbox that isolates nothing,
        the student's own runs fill it as they go; with an isolating one, there is none."""
        folder = self.cache / "sandbox-xla"
        with self._sandbox_cache_lock:
            if self._sandbox_cache is None and self.source is not None:
                self._sandbox_cache = self._fill_sandbox_cache(folder)
            elif self._sandbox_cache is None and not self._box().isolates:
                folder.mkdir(parents=True, exist_ok=True)
                self._sandbox_cache = CompileCache(folder, writable=True)
        return self._sandbox_cache

    def _fill_sandbox_cache(self, folder: Path) -> CompileCache:
        """Run the public cells once, with the cache writable, unless it was already filled from
        these cells in this kind of sandbox by this grader's code (whose runner chooses how
        programs compile). A run that fails leaves a cache that is only smaller."""
        cells = nbio.public_cells(self.source)
        box = self._box()
        where = json.dumps([cells, box.name, getattr(box, "image", "")])
        stamp = hashlib.sha256((where + code_text(*UNTRUSTED_SIDE)).encode())
        done = folder / "filled-from"
        folder.mkdir(parents=True, exist_ok=True)
        if not done.is_file() or done.read_text() != stamp.hexdigest():
            with tempfile.TemporaryDirectory(prefix="jaxcourse-warm-") as tmp:
                work = self.prepare(cells, Path(tmp), keep_going=True)
                box.run(work.job, work.out, self.timeout, CompileCache(folder, writable=True))
            write_atomic(done, stamp.hexdigest())
        return CompileCache(folder)

    def _references_ahead(self) -> None:
        """The reference records, computed in the background: a failure is raised again where
        they are needed, with the grader's own message."""
        try:
            _ = self.references
        except Exception:  # computed again, and raised, when the measurement needs them
            pass

    def _source(self, course: Course | None) -> Any:
        if course is None:
            return None
        path = course.nbgrader_root / "source" / self.assignment.name / self.assignment.notebook
        return nbio.read(path) if path.is_file() else None

    def fingerprint(self, notebook: Path) -> str:
        """What a report of ``notebook`` depends on: the grading and the notebook's bytes (or why
        they cannot be read)."""
        return self._read(notebook)[0]

    def _read(self, notebook: Path) -> tuple[str, Any]:
        """The fingerprint, and the notebook or the ``NotebookError`` that says why it cannot be
        graded; its bytes are read once, so the fingerprint is of what is graded."""
        try:
            data = nbio.read_bytes(notebook)
        except nbio.NotebookError as err:
            return self._fingerprint(f"unreadable: {err}".encode()), err
        fingerprint = self._fingerprint(data)
        try:
            nb = nbio.parse(data, notebook.name)
        except nbio.NotebookError as err:
            return fingerprint, err
        named = nbio.assignment_of(nb)
        if named is not None and named != self.assignment.name:
            return fingerprint, nbio.NotebookError(f"{notebook.name} is for {named[:80]}, not {self.assignment.name}")
        return fingerprint, nb

    def _fingerprint(self, data: bytes) -> str:
        digest = hashlib.sha256(self.fingerprint_base.encode())
        digest.update(data)
        return digest.hexdigest()

    # ------------------------------------------------------------------ one submission

    def grade(self, student: str, notebook: Path) -> Report:
        """One submission, stage by stage (docs/grading.md): each stage's output is the next one's
        input, and any may stop the submission with its student's status and reason."""
        fingerprint, nb = self._read(notebook)  # read and fingerprint: the bytes once
        if isinstance(nb, nbio.NotebookError):
            return self.failed(student, "invalid", str(nb), fingerprint)
        box, watch = self._box(), Stopwatch()  # a grader made without a sandbox stops here
        if self._references is None:  # the first submission: compute them while its sandbox runs
            threading.Thread(target=self._references_ahead, daemon=True).start()
        with watch.phase("sandbox compile cache"):  # filled by the first submission's grading too
            cache = self.sandbox_cache
        try:
            with scratch(f"jaxcourse-{student}-", box) as tmp:
                work = self.prepare(nbio.code_cells(nb, self.source), tmp)  # plan: the visible calls
                ran = run_sealed(box, work, self._calls(hidden=True), self.timeout, cache, watch)  # sandbox, seal
                results = read_results(ran, work, self._ids(hidden=False), self._ids(hidden=True), self.timeout, watch)
                measured = self._measure(results, tmp, watch)  # the trusted worker, against the references
            report = Report(
                student,
                self.assignment.name,
                "graded",
                "",
                self.score(measured),
                programs=self.programs(measured),
                at_scale=self.at_scale(measured),
            )
        except Stop as stop:
            report = self.failed(student, stop.status, stop.message)
        report.fingerprint, report.profile = fingerprint, watch
        return report

    def prepare(self, cells: list[Cell], work: Path, keep_going: bool = False) -> Workspace:
        """The sandbox's job folder (cells and the plan of the visible cases), its empty results
        folder, and the grader's own folder for the artifacts taken out of the results.
        ``keep_going``: run every cell and call nothing (filling the compile cache)."""
        folders = Workspace(work / "job", work / "out", work / "artifacts", work / "sealed")
        for folder in (folders.job, folders.out, folders.artifacts):
            folder.mkdir(exist_ok=True)  # a warm sandbox's workspace has its job and out, empty
        (folders.job / CELLS).write_text(json.dumps(cells))
        visible = [] if keep_going else self._calls(hidden=False)
        plan: Plan = {"num_devices": self.num_devices, "tests": visible, "keep_going": keep_going}
        if not keep_going and any(p.case.hidden for p in self.tests):
            plan["hidden_wait"] = HIDDEN_WAIT
        (folders.job / PLAN).write_text(json.dumps(plan))
        return folders

    def _calls(self, hidden: bool) -> list[PlannedCall]:
        """The calls of the visible cases, or of the hidden ones, indexed over all of them."""
        return [
            {"id": p.id, "sig": p.sig, "index": i, "timeout": self.test_timeout}
            for i, p in enumerate(self.tests)
            if p.case.hidden == hidden
        ]

    def _ids(self, hidden: bool) -> set[str]:
        return {p.id for p in self.tests if p.case.hidden == hidden}

    def score(self, measured: dict[str, Measurement]) -> list[TestResult]:
        """Every task's parts, each case's measurement with its closed-form targets beside it."""
        targets = {p.id: records.targets(self.references[p.id]) for p in self.tests if not p.projected}
        return [
            r
            for task in self.tasks
            for r in score_task(
                task,
                [
                    (p.case, {**measured[p.id], "targets": targets[p.id]})
                    for p in self.tests
                    if p.task is task and not p.projected
                ],
            )
        ]

    def programs(self, measured: dict[str, Measurement]) -> dict[str, list[str]]:
        """Each function's program shape, from the first of its visible cases that was measured."""
        found: dict[str, list[str]] = {}
        for p in self.tests:
            program = cast(ArrayMeasurement, measured[p.id]).get("program")  # the array kinds' only
            if not p.case.hidden and not p.projected and program and p.task.name not in found:
                found[p.task.name] = program
        return found

    def at_scale(self, measured: dict[str, Measurement]) -> dict[str, ScaledProgram]:
        """Each function's program at its realistic size beside the reference's, where it compiled
        there (trusted/projection.py): reported, never scored."""
        found: dict[str, ScaledProgram] = {}
        for p in self.tests:
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

    def failed(self, student: str, status: str, message: str, fingerprint: str = "") -> Report:
        """A report of zeros for every test, with the status and the reason it could not be graded."""
        tests = [
            TestResult(f"{t.name}: {part}", t.grade_id, 0.0, points, status, message, _visibility(t, part))
            for t in self.tasks
            for part, points in t.points.items()
            if _visibility(t, part) == "visible" or any(c.hidden for c in t.cases)
        ]
        return Report(student, self.assignment.name, status, message, tests, fingerprint)

    # ------------------------------------------------------------------ trusted measurement

    def _measure(self, results: Results, work: Path, watch: Stopwatch) -> dict[str, Measurement]:
        """Measurements per test id, or a Stop with the reason the whole measurement failed."""
        with watch.phase("trusted: all"):
            with watch.phase("reference cache"):  # computed by the first submission, shared by the rest
                _ = self.references
            entries = [
                evaluation(p, self.references[p.id], results["tests"].get(p.id), self.cases_of(p)) for p in self.tests
            ]
            done = self.measured.reused(entries, results["meshes"])
            watch.count("measurements reused", len(done))
            verdicts = {i: m["values"]["ok"] for i, m in done.items()}  # a program at scale waits for these too
            done.update(
                {e["id"]: w for e in entries if e["id"] not in done and (w := waits(e.get("after", []), verdicts))}
            )
            pending = [e for e in entries if e["id"] not in done]
            worker = TrustedWorker(work, self.num_devices, self.compile_cache, self.startup, self.test_timeout)
            try:
                done.update(worker.measure(pending, results["meshes"], self.measured, watch))
            except MeshDiffers as err:
                raise Stop("error", self._mesh_mismatch(str(err))) from None
            except WorkerStopped as err:  # its words may describe a hidden case's program: not shown then
                shown = "the grader's worker stopped early" if self._ids(hidden=True) & set(err.pending) else str(err)
                raise Stop("error", shown) from None
            return done

    def cases_of(self, planned: PlannedTest) -> list[str]:
        """What a program at scale waits for: its function's cases (none for a case itself)."""
        if not planned.projected:
            return []
        return [p.id for p in self.tests if p.task is planned.task and not p.projected]

    def _mesh_mismatch(self, message: str) -> str:
        """The worker's words name the mesh; a hidden case's mesh is not named to the student."""
        shown = {p.sig.get("mesh") for p in self.tests if not p.case.hidden}
        named = message.removeprefix("jaxcourse: error: mesh ").split(":", 1)[0]
        if named in shown:
            return message
        return "jaxcourse: error: the sandbox ran a hidden case on another mesh than the grader's"


def _visibility(task: Task, part: str) -> str:
    """Whether a part is judged on hidden cases only: "hidden values", or a training task's
    layout that no visible case runs."""
    if part == "hidden values":
        return "hidden"
    if task.kind == "training" and part not in {layout_label(*c.args) for c in task.cases if not c.hidden}:
        return "hidden"
    return "visible"


class NoReferences(JaxcourseError):
    """Neither the instructor's solutions nor the records a release ships are at hand."""


def provider_for(assignment: Assignment, course: Course | None, salted: bool = True) -> Provider:
    """The instructor's solutions where the course has them (``salted=False``: on the inputs a
    student's check meets); else the records the release shipped (a student's copy:
    ``JAXCOURSE_EXPECTED`` in the image, or the course's own)."""
    if course is not None and course.has_solutions(assignment):
        return Provider.solutions(course, assignment, salted)
    store = expected.find_store(assignment, course)
    if store is None:
        raise NoReferences(
            f"no references for {assignment.name}: grading needs the instructor's solutions/, or the records "
            f"`jaxcourse release` ships with the course (set {expected.ENV} to their folder)"
        )
    return Provider.shipped(store, assignment)


def grader_for(assignment: str, course: Course | None, cache: Path | None = None, **options: Any) -> Grader:
    """The one way to make a ``Grader``: its reference cache under the course (or a temporary
    directory), its time limits from the course's ``jaxcourse.toml`` (``[sandbox]``, then the
    assignment's own table) unless ``options`` name them."""
    spec = specs.get(assignment)
    if cache is None:
        base = course.nbgrader_root if course else Path(tempfile.gettempdir())
        cache = base / ".jaxcourse" / "reference" / spec.name
    if course is not None:
        lim = limits.load(course.root, spec.name)
        options = {"timeout": lim.timeout, "test_timeout": lim.test_timeout, **options}
    return Grader(provider_for(spec, course), cache, **options)
