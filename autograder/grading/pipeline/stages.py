"""One submission's grading, declared: the stages below run in order, each taking the record the
last one gave (``handoff.py``) and giving the next one's, and any of them may stop the submission
with a ``Stop``, the status and the reason its student reads, every part then at zero. Open this
module first: each stage is one function, in the module named beside it (docs/grading.md).

``grader.Grader`` holds only what spans stages and submissions (configuration, the planned tests,
the reference, compile and measurement caches); ``Grader.grade`` runs ``grade`` below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..submission.report import Report
from .handoff import Grading, Setup, Stop, Submitted
from .judged import measure, score
from .read import read
from .sandboxed import plan_job, read_results, run_sealed

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True)
class Stage(Generic[In, Out]):
    """One step: its name, its function from one record to the next, and the statuses with which
    it may stop the submission."""

    name: str
    run: Callable[[Grading, In], Out]
    stops: tuple[str, ...] = ()


STAGES: tuple[Stage[Any, Any], ...] = (
    Stage("read", read, ("invalid",)),  # read.py: Submitted -> Notebook, fingerprinted
    Stage("plan", plan_job),  # sandboxed.py: Notebook -> Job, the cells and visible calls in a workspace
    Stage("sandbox and seal", run_sealed, ("timeout", "invalid")),  # sandboxed.py: Job -> Ran
    Stage("read results", read_results, ("crashed", "invalid", "error")),  # sandboxed.py: Ran -> Checked
    Stage("measure", measure, ("error",)),  # judged.py: Checked -> Measured, by the trusted worker
    Stage("score", score),  # judged.py: Measured -> Report
)


def grade(setup: Setup, student: str, notebook: Path) -> Report:
    """One submission through every stage; never raises for a student's fault: a ``Stop`` becomes
    a report of zeros with its status and reason. Every report carries the notebook's fingerprint
    and where its time went."""
    grading = Grading(setup, student)
    given: Any = Submitted(student, notebook)
    try:
        with grading.held:  # the sandbox's workspace, from the plan on
            for stage in STAGES:
                given = stage.run(grading, given)
        report: Report = given
    except Stop as stop:
        report = setup.failed(student, stop.status, stop.message)
    report.fingerprint, report.profile = grading.fingerprint, grading.watch
    return report
