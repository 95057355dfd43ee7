"""What the trusted worker is handed: cases to measure (``Evaluation``) and references to compute
(``ReferenceJob``), as the grader writes them into its job file; and the reference functions of
one assignment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from ..core.records import CaseTargets, Measurement, Signature
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


class References:
    """The reference functions of one assignment, and its training layouts, each run once."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.layouts = LayoutRuns(lookup)
