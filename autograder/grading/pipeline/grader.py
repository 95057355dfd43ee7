"""What every submission of one assignment shares: one ``Grader`` per assignment holds the tasks,
the planned tests, the time limits, the sandbox and the caches filled once (reference records,
compiled programs, measurements); ``Grader.grade`` runs one notebook through the stages
``stages.py`` declares, and never raises for a student's fault: whatever goes wrong becomes a
status and a message on that student's report.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from pathlib import Path
from typing import Any

from ... import specs
from ...core.course import Course
from ...core.errors import JaxcourseError
from ...core.files import write_atomic
from ...core.mesh import MeshSpec, default_device_count
from ...core.protocol import PlannedCall
from ...core.records import TestResult
from ...core.tasks import Assignment, Task
from ...harness.layouts import layout_label
from ..sandbox import limits
from ..sandbox.package import UNTRUSTED_SIDE, code_text
from ..sandbox.sandbox import CompileCache, Sandbox
from ..submission import notebooks as nbio
from ..submission.report import Report
from . import expected, references, stages
from .measured import MeasuredPrograms
from .plan import plan
from .read import fingerprinted
from .references import Provider
from .sandboxed import workspace

DEFAULT_TIMEOUT = 300.0  # seconds for one submission's cells and exports
DEFAULT_TEST_TIMEOUT = 60.0  # seconds for one export in the sandbox, or one run when measured
EVALUATOR_STARTUP = 60.0  # seconds the trusted worker may take to start before its first test


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
        self._references_started = threading.Lock()  # taken once, never given back: one thread ahead
        self._sandbox_cache: CompileCache | None = None
        self._sandbox_cache_lock = threading.Lock()
        jobs = [{"id": p.id, "sig": p.sig, "seed": p.seed, "targets": p.targets} for p in self.tests]
        # A report stays valid while the notebook, the reference, the cases and the package's
        # own code are all unchanged.
        self.fingerprint_base = provider.source_text + json.dumps(jobs, sort_keys=True) + code_text()
        # None: a grader that identifies submissions and reports on those no grader can read
        # (the hub's grading service, formgrader, a queue's dispatcher) but runs none of them.
        self.sandbox = sandbox
        # The same program on the same test is measured once, whoever hands it in.
        self.measured = MeasuredPrograms(cache / "measured")

    def box(self) -> Sandbox:
        """The sandbox this grader runs notebooks in; a grader made without one refuses here."""
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
            elif self._sandbox_cache is None and not self.box().isolates:
                folder.mkdir(parents=True, exist_ok=True)
                self._sandbox_cache = CompileCache(folder, writable=True)
        return self._sandbox_cache

    def _fill_sandbox_cache(self, folder: Path) -> CompileCache:
        """Run the public cells once, with the cache writable, unless it was already filled from
        these cells in this kind of sandbox by this grader's code (whose runner chooses how
        programs compile). A run that fails leaves a cache that is only smaller."""
        cells = nbio.public_cells(self.source)
        box = self.box()
        where = json.dumps([cells, box.name, getattr(box, "image", "")])
        stamp = hashlib.sha256((where + code_text(*UNTRUSTED_SIDE)).encode())
        done = folder / "filled-from"
        folder.mkdir(parents=True, exist_ok=True)
        if not done.is_file() or done.read_text() != stamp.hexdigest():
            with tempfile.TemporaryDirectory(prefix="jaxcourse-warm-") as tmp:
                work = workspace(self, cells, Path(tmp), keep_going=True)
                box.run(work.job, work.out, self.timeout, CompileCache(folder, writable=True))
            write_atomic(done, stamp.hexdigest())
        return CompileCache(folder)

    def start_references(self) -> None:
        """The first submission's: the reference records computed while its sandbox runs. One
        thread computes them; the submissions that start meanwhile wait where they need them."""
        if self._references is None and self._references_started.acquire(blocking=False):
            threading.Thread(target=self._references_ahead, daemon=True).start()

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
        return fingerprinted(self, notebook)[0]

    def grade(self, student: str, notebook: Path) -> Report:
        """One submission, stage by stage (``stages.STAGES``, docs/grading.md)."""
        return stages.grade(self, student, notebook)

    def calls(self, hidden: bool) -> list[PlannedCall]:
        """The calls of the visible cases, or of the hidden ones, indexed over all of them."""
        return [
            {"id": p.id, "sig": p.sig, "index": i, "timeout": self.test_timeout}
            for i, p in enumerate(self.tests)
            if p.case.hidden == hidden
        ]

    def ids(self, hidden: bool) -> set[str]:
        return {p.id for p in self.tests if p.case.hidden == hidden}

    def failed(self, student: str, status: str, message: str, fingerprint: str = "") -> Report:
        """A report of zeros for every test, with the status and the reason it could not be graded."""
        tests = [
            TestResult(f"{t.name}: {part}", t.grade_id, 0.0, points, status, message, _visibility(t, part))
            for t in self.tasks
            for part, points in t.points.items()
            if _visibility(t, part) == "visible" or any(c.hidden for c in t.cases)
        ]
        return Report(student, self.assignment.name, status, message, tests, fingerprint)


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
