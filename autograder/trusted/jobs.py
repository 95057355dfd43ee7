"""What the trusted worker is handed: cases to measure (``Evaluation``, in a ``MeasureJob``) and
references to compute (``ReferenceJob``, in a ``ReferenceRun``), as the grader writes them into
its job file; what it writes back as it measures (``Progress``, a line each); and the reference
functions of one assignment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict, final

from ..core.records import CaseTargets, Measurement, Signature, fail
from ..core.tasks import Case
from ..harness.layouts import LayoutRuns

Measured = list[tuple[Case, Measurement]]
Lookup = Callable[[str], Callable[..., Any]]


class ReferenceJob(TypedDict):
    sig: Signature
    seed: int
    targets: CaseTargets  # the task's closed forms on this case, kept in the record
    store: str  # where the record goes (a path prefix)


class Evaluation(TypedDict, total=False):
    """One case for the trusted worker: the call, its seed and reference, and what the sandbox
    gave (an artifact's host path, a plain value, or why it gave neither)."""

    id: str
    sig: Signature
    seed: int
    reference: str
    tolerance: list[float]
    artifact: str
    result: dict[str, Any]
    failure: str
    varying: list[str]
    hidden: bool  # a hidden case: nothing of it is drawn for its student
    # Wrong values come with expected values beside the returned ones: a student's own check only
    # (its inputs unsalted, their records shipped); never a grading's, salted or hidden.
    sample: bool
    # A program at scale: the ids of its function's cases, whose values must all be right for it
    # to be compiled (its time means nothing otherwise).
    after: list[str]


WAITS = "not projected at scale: its values are not right yet"


def waits(after: list[str], verdicts: dict[str, bool]) -> Measurement | None:
    """A program at scale is compiled only once its function's cases (``after``) have right values:
    a wrong program's time would rank nothing and tell its student nothing. A case whose verdict
    is not in ``verdicts`` counts as right (the grader checks the cases it reused itself)."""
    if all(verdicts.get(case, True) for case in after):
        return None
    return {"values": fail(WAITS)}


class MeasureJob(TypedDict):
    """A submission's cases, measured on ``meshes`` (the sandbox's, checked against the worker's
    own); a line per event appended to ``progress``, so the grader times each case."""

    mode: Literal["submission"]
    num_devices: int
    meshes: dict[str, Any]
    progress: str
    tests: list[Evaluation]


@final
class Ready(TypedDict):
    """The worker's first progress line: its clock when its meshes were built."""

    ready_at: float


@final
class Started(TypedDict):
    """A case begun: a worker killed now is blamed on it."""

    started: str


@final
class Done(TypedDict):
    """A case measured, and how long it took on the worker's clock."""

    id: str
    took: float
    measurement: Measurement


@final
class Counts(TypedDict):
    """The worker's last line: how many programs it compiled."""

    counts: dict[str, int]


# One line of a MeasureJob's progress file, as the worker appends it.
Progress = Ready | Started | Done | Counts


class ProviderRef(TypedDict):
    root: str  # the instructor's checkout, whose solutions/ hold the references
    assignment: str


class ReferenceRun(TypedDict):
    mode: Literal["reference"]
    num_devices: int
    provider: ProviderRef
    tests: list[ReferenceJob]


WorkerJob = MeasureJob | ReferenceRun


class References:
    """The reference functions of one assignment, and its training layouts, each run once."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.layouts = LayoutRuns(lookup)
