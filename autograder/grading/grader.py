"""Grade one submission: the sandbox runs and exports, the trusted worker measures, the kind's
verdict scores.

One ``Grader`` per assignment holds what every submission shares (tasks, planned tests,
cached reference results); ``Grader.grade`` handles one notebook and never raises for a
student's fault: whatever goes wrong becomes a status and a message on that student's report.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .. import specs
from ..core.course import Course
from ..core.files import write_atomic
from ..core.mesh import MeshSpec, default_device_count
from ..core.profile import Stopwatch
from ..core.protocol import CELLS, PLAN, Cell, Plan, PlannedCall, Results
from ..core.records import Measurement, Signature, TestResult
from ..core.tasks import Assignment, Case, Task, case_id, case_seed
from ..harness.kinds import signature
from ..trusted import results as protocol
from ..trusted.jobs import Evaluation
from ..trusted.kinds import score_task
from ..trusted.worker import MESH_MISMATCH_EXIT
from . import references
from . import submissions as nbio
from .measured import MeasuredPrograms
from .package import code_text
from .references import WORKER
from .report import Report
from .sandbox import CompileCache, Outcome, ProcessSandbox, Sandbox, clean_env, run_process

DEFAULT_TIMEOUT = 300.0  # seconds for one submission's cells and exports
DEFAULT_TEST_TIMEOUT = 60.0  # seconds for one export in the sandbox, or one run when measured
EVALUATOR_STARTUP = 60.0  # seconds the trusted worker may take to start before its first test


@dataclass(frozen=True)
class PlannedTest:
    id: str
    task: Task
    case: Case
    sig: Signature
    seed: int


class Grader:
    """Everything one assignment's submissions share. The reference results are computed on
    first use (the first ``grade``), not when the grader is made."""

    def __init__(
        self,
        assignment: Assignment,
        course: Course | None,
        cache: Path,
        timeout: float = DEFAULT_TIMEOUT,
        test_timeout: float = DEFAULT_TEST_TIMEOUT,
        startup: float = EVALUATOR_STARTUP,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.assignment = assignment
        self.with_solutions = course is not None and course.has_solutions(assignment)
        if course is not None and self.with_solutions:
            provider = references.Provider.solutions(course.root, assignment.solutions)
            tasks = tuple(t.with_hidden(course.hidden_cases(assignment, t.name)) for t in assignment.tasks)
        else:
            provider = references.Provider.oracle(assignment.name)
            tasks = assignment.tasks
        self.tasks = tasks
        self.tests = [
            PlannedTest(case_id(t, i), t, c, signature(t, c, assignment.name), case_seed(assignment.name, t.name, c))
            for t in tasks
            for i, c in enumerate(t.cases)
        ]
        self.num_devices = max([default_device_count()] + [MeshSpec.parse(p.case.mesh).size for p in self.tests])
        self.timeout, self.test_timeout, self.startup = timeout, test_timeout, startup
        self.source = self._source(course)
        self.provider, self.cache = provider, cache
        self._references: dict[str, str] | None = None
        self._references_lock = threading.Lock()
        self._sandbox_cache: CompileCache | None = None
        self._sandbox_cache_lock = threading.Lock()
        self._reference_jobs = [{"id": p.id, "sig": p.sig, "seed": p.seed} for p in self.tests]
        # A report stays valid while the notebook, the reference, the cases and the package's
        # own code are all unchanged.
        self.fingerprint_base = provider.source_text + json.dumps(self._reference_jobs, sort_keys=True) + code_text()
        self.sandbox = sandbox or ProcessSandbox()
        # Compiled programs, reused when two submissions export the same program; written and
        # read by the trusted worker only. The same program on the same test is measured once.
        self.compile_cache = cache / "xla"
        self.measured = MeasuredPrograms(cache / "measured")

    @property
    def references(self) -> dict[str, str]:
        """Each test's reference record (a path prefix), computed once, when first needed."""
        with self._references_lock:  # a class grades several submissions at once
            if self._references is None:
                self._references = references.ensure(
                    self.provider, self._reference_jobs, self.cache, self.num_devices, self.timeout
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
            elif self._sandbox_cache is None and not self.sandbox.isolates:
                folder.mkdir(parents=True, exist_ok=True)
                self._sandbox_cache = CompileCache(folder, writable=True)
        return self._sandbox_cache

    def _fill_sandbox_cache(self, folder: Path) -> CompileCache:
        """Run the public cells once, with the cache writable, unless it was already filled from
        these cells in this kind of sandbox. A run that fails leaves a cache that is only smaller."""
        cells = nbio.public_cells(self.source)
        stamp = hashlib.sha256(json.dumps([cells, self.sandbox.name, getattr(self.sandbox, "image", "")]).encode())
        done = folder / "filled-from"
        folder.mkdir(parents=True, exist_ok=True)
        if not done.is_file() or done.read_text() != stamp.hexdigest():
            with tempfile.TemporaryDirectory(prefix="jaxcourse-warm-") as tmp:
                job, out, _ = self.prepare(cells, Path(tmp), keep_going=True)
                self.sandbox.run(job, out, self.timeout, CompileCache(folder, writable=True))
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
        digest = hashlib.sha256(self.fingerprint_base.encode())
        digest.update(notebook.read_bytes() if notebook.is_file() else b"missing")
        return digest.hexdigest()

    # ------------------------------------------------------------------ one submission

    def grade(self, student: str, notebook: Path) -> Report:
        fingerprint = self.fingerprint(notebook)
        try:
            nb = nbio.read(notebook)
            named = nbio.assignment_of(nb)
            if named is not None and named != self.assignment.name:
                raise nbio.NotebookError(f"{notebook.name} is for {named}, not {self.assignment.name}")
        except nbio.NotebookError as err:
            return self.failed(student, "invalid", str(err), fingerprint)
        watch = Stopwatch()
        if self._references is None:  # the first submission: compute them while its sandbox runs
            threading.Thread(target=self._references_ahead, daemon=True).start()
        with watch.phase("sandbox compile cache"):  # filled by the first submission's grading too
            cache = self.sandbox_cache
        with tempfile.TemporaryDirectory(prefix=f"jaxcourse-{student}-") as tmp:
            report = self._grade_cells(student, nbio.code_cells(nb, self.source), Path(tmp), watch, cache)
        report.fingerprint, report.profile = fingerprint, watch
        return report

    def prepare(self, cells: list[Cell], work: Path, keep_going: bool = False) -> tuple[Path, Path, Path]:
        """The sandbox's job folder (cells and plan), its empty results folder, and the grader's
        own folder for the artifacts taken out of the results. ``keep_going``: run every cell and
        call nothing (filling the compile cache)."""
        job, out, artifacts = work / "job", work / "out", work / "artifacts"
        for folder in (job, out, artifacts):
            folder.mkdir()
        (job / CELLS).write_text(json.dumps(cells))
        tests: list[PlannedCall] = [
            {"id": p.id, "sig": p.sig, "index": i, "timeout": self.test_timeout} for i, p in enumerate(self.tests)
        ]
        plan: Plan = {"num_devices": self.num_devices, "tests": [] if keep_going else tests, "keep_going": keep_going}
        (job / PLAN).write_text(json.dumps(plan))
        return job, out, artifacts

    def _grade_cells(
        self, student: str, cells: list[Cell], work: Path, watch: Stopwatch, cache: CompileCache | None
    ) -> Report:
        job, out, artifacts = self.prepare(cells, work)
        with watch.phase("sandbox: all"):
            outcome = self.sandbox.run(job, out, self.timeout, cache)
        watch.update(outcome.phases, "sandbox: ")
        if outcome.status == "timeout":
            return self.failed(student, "timeout", f"the notebook did not finish within {self.timeout:g} s")
        if outcome.status == "invalid":
            return self.failed(student, "invalid", f"invalid results: the notebook's process {outcome.reason}")
        try:
            with watch.phase("results: read and check"):
                results = protocol.read_results(out, {p.id for p in self.tests}, artifacts)
        except protocol.NoResults:
            return self.failed(student, "crashed", _crash_message(outcome))
        except protocol.ResultsError as err:
            return self.failed(student, "invalid", f"invalid results: {err}")
        _runner_phases(results, outcome.started_at, watch)
        if results["notebook"]["status"] == "error":
            return self.failed(student, "error", results["notebook"]["message"])
        with watch.phase("trusted: all"):
            measured = self._evaluate(results, work, watch)
        if isinstance(measured, str):
            return self.failed(student, "error", measured)
        tests = [
            r
            for task in self.tasks
            for r in score_task(task, [(p.case, measured[p.id]) for p in self.tests if p.task is task])
        ]
        return Report(student, self.assignment.name, "graded", "", tests)

    def failed(self, student: str, status: str, message: str, fingerprint: str = "") -> Report:
        """A report of zeros for every test, with the status and the reason it could not be graded."""
        tests = [
            TestResult(f"{t.name}: {part}", t.grade_id, 0.0, points, status, message,
                       "hidden" if part == "hidden values" else "visible")
            for t in self.tasks
            for part, points in t.points.items()
            if part != "hidden values" or any(c.hidden for c in t.cases)
        ]  # fmt: skip
        return Report(student, self.assignment.name, status, message, tests, fingerprint)

    # ------------------------------------------------------------------ trusted measurement

    def _evaluate(self, results: Results, work: Path, watch: Stopwatch) -> dict[str, Measurement] | str:
        """Measurements per test id, or the reason the whole evaluation failed."""
        with watch.phase("reference cache"):  # computed by the first submission, shared by the rest
            _ = self.references
        entries = [self._eval_entry(p, results["tests"].get(p.id)) for p in self.tests]
        done = self.measured.reused(entries, results["meshes"])
        watch.count("measurements reused", len(done))
        pending = [e for e in entries if e["id"] not in done]
        progress = work / "evaluation.jsonl"
        while pending:
            job = {"mode": "submission", "num_devices": self.num_devices, "meshes": results["meshes"],
                   "progress": str(progress), "compile_cache": str(self.compile_cache), "tests": pending}  # fmt: skip
            write_atomic(work / "job.json", json.dumps(job))
            limit = self.startup + self.test_timeout * len(pending)
            argv = [sys.executable, "-m", WORKER, str(work / "job.json")]
            # A test that makes no progress for test_timeout (plus start-up, for the first) is stuck.
            outcome = run_process(argv, work, clean_env(work), limit, work / "evaluate.log",
                                  progress, self.test_timeout, self.startup)  # fmt: skip
            if outcome.returncode == MESH_MISMATCH_EXIT:
                return _last_line(outcome.log_tail)
            measured = _read_progress(progress)
            self.measured.remember(pending, results["meshes"], measured)
            done.update(measured)
            _worker_phases(progress, outcome.started_at, watch)
            progress.unlink(missing_ok=True)  # a worker started again for the rest writes anew
            pending = [t for t in pending if t["id"] not in done]
            if pending and outcome.status != "ok":
                # The first unmeasured test is the one that hung or crashed the worker: blame it.
                # A hang blames its function's other cases too: an endless loop costs one limit.
                stuck = pending[0]
                hung = outcome.status == "timeout"
                why = "did not finish" if hung else "crashed the grader's worker"
                blamed = [
                    t for t in pending if t is stuck or (hung and t["sig"]["function"] == stuck["sig"]["function"])
                ]
                for test in blamed:
                    done[test["id"]] = {"values": {"ok": False, "message": f"the exported program {why}"}}
                pending = [t for t in pending if t not in blamed]
            elif pending:
                return "the grader's worker stopped early: " + _last_line(outcome.log_tail)
        return done

    def _eval_entry(self, planned: PlannedTest, result: Any) -> Evaluation:
        entry: Evaluation = {"id": planned.id, "sig": planned.sig, "seed": planned.seed,
                 "reference": self.references[planned.id],
                 "tolerance": list(planned.task.tolerance_for(planned.case.dtype))}  # fmt: skip
        if result is None:
            entry["failure"] = "the runner produced no result for this case"
        elif result["status"] == "exported":
            entry["artifact"] = result["artifact"]
        elif result["status"] == "value":
            entry["result"] = result["result"]
        else:
            entry["failure"] = result.get("message") or result["status"]
            entry["varying"] = result.get("varying", [])
        return entry


def _progress_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    lines = []
    for line in path.read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a killed worker
    return lines


def _read_progress(path: Path) -> dict[str, Measurement]:
    done: dict[str, Measurement] = {}
    for record in _progress_lines(path):
        if "id" in record:
            record.pop("took", None)
            done[record.pop("id")] = cast(Measurement, record)  # the trusted worker's own lines
    return done


def _worker_phases(path: Path, started_at: float, watch: Stopwatch) -> None:
    """The trusted worker's start-up (its process started until its meshes were built), each
    function's measurements (deserialize, refuse or compile, run, compare, census) and the
    compile cache's hits, from its progress lines."""
    for record in _progress_lines(path):
        if "ready_at" in record:
            watch.add("trusted: worker start-up", max(0.0, record["ready_at"] - started_at))
        elif "took" in record:
            watch.add(f"trusted: measure {record['id'].rsplit('/', 1)[0]}", record["took"])
        elif "cache" in record:
            for name, n in record["cache"].items():
                watch.count(name, n)


def _runner_phases(results: Results, started_at: float, watch: Stopwatch) -> None:
    """The runner's own timings: from the sandbox, so shown in a profile and never scored on."""
    profile = results.get("profile")
    if profile is None:
        return
    if started_at:
        watch.add("runner: interpreter start", max(0.0, profile["entered_at"] - started_at))
    watch.update(profile["seconds"], "runner: ")


def _crash_message(outcome: Outcome) -> str:
    """Why the notebook's process left no results, in words, with its last line of output."""
    why = outcome.reason or "stopped"
    if outcome.status == "ok":
        why = "exited before writing its results"
    last = _last_line(outcome.log_tail)
    return f"the notebook's process {why}" + (f"; its last output: {last[:300]}" if last != "no output" else "")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def grader_for(assignment: str, course: Course | None, cache: Path | None = None, **options: Any) -> Grader:
    """A ``Grader``, with its reference cache under the course (or a temporary directory)."""
    spec = specs.get(assignment)
    if cache is None:
        base = course.nbgrader_root if course else Path(tempfile.gettempdir())
        cache = base / ".jaxcourse" / "reference" / spec.name
    return Grader(spec, course, cache, **options)
