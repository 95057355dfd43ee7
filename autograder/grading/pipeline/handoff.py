"""What one stage of a submission's grading hands the next (``stages.py`` declares them in order):
one typed record each, and the few things every stage may read: the grading's setup, which spans
all submissions (the ``Grader``), and this submission's student, stopwatch and fingerprint."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ...core.profile import Stopwatch
from ...core.protocol import PlannedCall, Results
from ...core.records import Measurement
from ...core.tasks import Assignment, Task
from ..sandbox.sandbox import CompileCache, Outcome, Sandbox
from ..submission.report import Report
from .measured import MeasuredPrograms
from .plan import PlannedTest


class Stop(Exception):
    """The submission is graded no further: every part scores zero, with this status and reason."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class Setup(Protocol):
    """What the stages read of the grading that spans submissions (``grader.Grader``): its
    configuration, the planned tests, and the caches filled once and shared."""

    assignment: Assignment
    tasks: tuple[Task, ...]
    tests: list[PlannedTest]
    num_devices: int
    timeout: float
    test_timeout: float
    startup: float
    source: Any
    fingerprint_base: str
    measured: MeasuredPrograms

    @property
    def references(self) -> dict[str, str]: ...
    @property
    def sandbox_cache(self) -> CompileCache | None: ...
    def box(self) -> Sandbox: ...
    def start_references(self) -> None: ...
    def calls(self, hidden: bool) -> list[PlannedCall]: ...
    def ids(self, hidden: bool) -> set[str]: ...
    def failed(self, student: str, status: str, message: str, fingerprint: str = "") -> Report: ...


@dataclass
class Grading:
    """One submission's grading, as every stage sees it. The workspace the sandbox lends it is
    held in ``held`` from the plan to the end of the last stage, and released even on a ``Stop``."""

    setup: Setup
    student: str
    watch: Stopwatch = field(default_factory=Stopwatch)
    fingerprint: str = ""  # what its report depends on, known once the notebook is read
    held: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)


@dataclass(frozen=True)
class Submitted:
    """The input: whose notebook, and where it lies."""

    student: str
    notebook: Path


@dataclass(frozen=True)
class Notebook:
    """The notebook read, checked to be this assignment's (an nbformat node)."""

    nb: Any


@dataclass(frozen=True)
class Workspace:
    """One submission's folders, under ``root``, the sandbox's workspace: the sandbox's job (cells
    and plan) and results, the grader's own for the artifacts taken out of the results, and where
    the first phase's results are sealed."""

    root: Path
    job: Path
    out: Path
    artifacts: Path
    sealed: Path


@dataclass(frozen=True)
class Job:
    """The workspace planned, and the sandbox that will run it with its compile cache."""

    work: Workspace
    box: Sandbox
    cache: CompileCache | None


@dataclass(frozen=True)
class Ran:
    """What the sandbox did, and the folder its visible results are read from."""

    outcome: Outcome
    visible: Path
    work: Workspace


@dataclass(frozen=True)
class Checked:
    """Every test's call, read back and checked, the hidden ones added."""

    results: Results
    work: Workspace


@dataclass(frozen=True)
class Measured:
    """A measurement per test id, by the trusted worker against the references."""

    measurements: dict[str, Measurement]
