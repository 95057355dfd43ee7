"""Reference records: for each planned case, the reference run through the same wrapper on the
same mesh and inputs, with the task's closed-form targets on that case beside it.

Two places give them. The instructor's grader makes them in the trusted worker from the
course's ``solutions/`` (``Provider.solutions``), once per assignment x case, cached on disk by a
fingerprint of everything they depend on (the solutions' text, the call signature, the seed, the
engine code that draws the inputs and measures the run, the JAX version). A student's copy has no
solutions: it reads the records that ``jaxcourse release`` made for the visible cases and shipped
with the course (``Provider.shipped``, ``expected.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...core.course import Course
from ...core.errors import JaxcourseError
from ...core.records import CaseTargets
from ...core.tasks import Assignment, Case, Task
from ...trusted import reference as records
from ...trusted.jobs import ReferenceJob, ReferenceRun
from ..sandbox.package import code_text
from ..sandbox.sandbox import Deadline
from .plan import PlannedTest
from .worker_process import run_worker

# The code a reference record passes through: a record made by older code may lack a field
# (such as program_bytes) that today's comparison reads, so any change here recomputes it.
ENGINE = ("core", "harness", "trusted")


class ReferenceFailed(JaxcourseError):
    """The reference itself failed to run, or its record is missing: a problem with the course,
    not with a student."""


@dataclass(frozen=True)
class Provider:
    """Where each case's reference record comes from, and the salt of the seeds it was made on
    (``tasks.case_seed``): the instructor's grader salts them with the course's secret; the
    records a student's check meets were made unsalted, on the inputs the student can make."""

    kind: Literal["solutions", "shipped"]
    assignment: Assignment
    salt: str
    course: Course | None = None  # solutions: the instructor's checkout
    store: Path | None = None  # shipped: the release's records of this assignment

    @classmethod
    def solutions(cls, course: Course, assignment: Assignment, salted: bool = True) -> Provider:
        """The instructor's references; ``salted=False`` makes the records a student's check
        judges against (``jaxcourse release``, and an instructor's own check)."""
        return cls("solutions", assignment, course.salt() if salted else "", course=course)

    @classmethod
    def shipped(cls, store: Path, assignment: Assignment) -> Provider:
        return cls("shipped", assignment, "", store=store)

    @property
    def source_text(self) -> str:
        """What a record's validity depends on, besides the engine: the solutions' text, or
        where the shipped records are."""
        if self.course is not None:
            return (self.course.solutions_dir / f"{self.assignment.solutions}.py").read_text()
        return str(self.store)

    def hidden_cases(self, task: Task) -> tuple[Case, ...]:
        """The cases only the instructor has; a student's copy has none."""
        return self.course.hidden_cases(self.assignment, task.name) if self.course is not None else ()

    def targets(self, task: Task, case: Case) -> CaseTargets:
        """The task's closed forms on ``case``, to be kept in its record (shipped ones hold theirs)."""
        return self.course.targets(self.assignment, task.name).on(case) if self.course is not None else {}


def record_key(sig: Any, seed: int) -> str:
    """A shipped record's name: the case's call and seed, all a student's check knows of it."""
    return hashlib.sha256(json.dumps([sig, seed], sort_keys=True).encode()).hexdigest()[:32]


def fingerprint(provider: Provider, sig: Any, seed: int) -> str:  # sig {}: a job file's name
    blob = json.dumps([_provider_digest(provider.kind, provider.source_text), sig, seed], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=16)
def _provider_digest(kind: str, source_text: str) -> str:
    """What all of a provider's records share, hashed once per process: its solutions' text, the
    engine's code and JAX's version (a grader looks up every test's record for each submission)."""
    import jax

    blob = json.dumps([kind, source_text, code_text(*ENGINE), jax.__version__])
    return hashlib.sha256(blob.encode()).hexdigest()


def ensure(
    provider: Provider, tests: list[PlannedTest], cache: Path, num_devices: int, timeout: float
) -> dict[str, str]:
    """Paths (without suffix) of each test's reference record, computing the missing ones."""
    if provider.kind == "shipped":
        return _shipped(provider, tests)
    cache.mkdir(parents=True, exist_ok=True)
    prefixes = {t.id: str(cache / fingerprint(provider, t.sig, t.seed)) for t in tests}
    missing: list[ReferenceJob] = [
        {"sig": t.sig, "seed": t.seed, "targets": t.targets, "store": prefixes[t.id]}
        for t in tests
        if not records.exists(prefixes[t.id])
    ]
    if missing:
        assert provider.course is not None  # a solutions provider has its course
        job: ReferenceRun = {
            "mode": "reference",
            "num_devices": num_devices,
            "tests": missing,
            "provider": {"root": str(provider.course.root), "assignment": provider.assignment.name},
        }
        name = f"job-{fingerprint(provider, {}, len(missing))}"
        outcome = run_worker(job, cache, name, Deadline(timeout))
        (cache / f"{name}.json").unlink()
        if outcome.status != "ok":
            raise ReferenceFailed(f"the reference failed to run ({outcome.status}):\n{outcome.log_tail}")
    return prefixes


def _shipped(provider: Provider, tests: list[PlannedTest]) -> dict[str, str]:
    assert provider.store is not None  # a shipped provider has its store
    prefixes = {t.id: str(provider.store / record_key(t.sig, t.seed)) for t in tests}
    missing = [t.id for t in tests if not records.exists(prefixes[t.id])]
    if missing:
        raise ReferenceFailed(
            f"no expected record for {', '.join(missing[:3])} in {provider.store}: the course's records are "
            "older than its tasks; the instructor makes them anew with `jaxcourse release`"
        )
    return prefixes
