"""The stages of one submission's grading that read what the sandbox left (``Grader.grade`` lists
them all, in order): each takes the last one's output and gives the next one's input, or stops the
submission with a ``Stop``, the status and the reason its student reads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core.profile import Stopwatch
from ...core.protocol import HIDDEN_ARTIFACTS, HIDDEN_RESULTS, CallResult, PlannedCall, Results
from ...trusted import results as protocol
from ..sandbox.sandbox import CompileCache, Outcome, Sandbox, last_line
from ..sandbox.seal import HiddenPhase


class Stop(Exception):
    """The submission is graded no further: every part scores zero, with this status and reason."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class Workspace:
    """One submission's folders: the sandbox's job (cells and plan) and results, the grader's own
    for the artifacts taken out of the results, and where the first phase's results are sealed."""

    job: Path
    out: Path
    artifacts: Path
    sealed: Path


@dataclass(frozen=True)
class Ran:
    """What the sandbox did, and the folder its visible results are read from."""

    outcome: Outcome
    visible: Path


def run_sealed(
    box: Sandbox,
    work: Workspace,
    hidden: list[PlannedCall],
    timeout: float,
    cache: CompileCache | None,
    watch: Stopwatch,
) -> Ran:
    """The notebook runs in the sandbox; once its visible results are out they are sealed, and
    only then does it learn the hidden cases. Until the seal, what it wrote and said may be shown."""
    with watch.phase("sandbox: all"), HiddenPhase(work.job, work.out, work.sealed, hidden) as phase:
        outcome = box.run(work.job, work.out, timeout, cache)
    watch.update(outcome.phases, "sandbox: ")
    if outcome.status == "timeout" and not phase.is_sealed:
        raise Stop("timeout", f"the notebook did not finish within {timeout:g} s")
    if outcome.status == "invalid" and not phase.is_sealed:
        raise Stop("invalid", f"invalid results: the notebook's process {outcome.reason}")
    if phase.problem:  # what it wrote first could not be sealed, and so is never read
        raise Stop("invalid", f"invalid results: {phase.problem}")
    return Ran(outcome, work.sealed if phase.is_sealed else work.out)


def read_results(
    ran: Ran, work: Workspace, visible: set[str], hidden: set[str], timeout: float, watch: Stopwatch
) -> Results:
    """Every test's call, checked: the visible ones from before the seal, the hidden ones after."""
    try:
        with watch.phase("results: read and check"):
            results = protocol.read_results(ran.visible, visible, work.artifacts)
    except protocol.NoResults:
        raise Stop("crashed", _crash_message(ran.outcome)) from None
    except protocol.ResultsError as err:
        raise Stop("invalid", f"invalid results: {err}") from None
    _runner_phases(results, ran.outcome.started_at, watch)
    if results["notebook"]["status"] == "error":
        raise Stop("error", results["notebook"]["message"])
    if hidden:
        _add_hidden(results, ran.outcome, work, hidden, timeout)
    return results


def _add_hidden(results: Results, outcome: Outcome, work: Workspace, hidden: set[str], timeout: float) -> None:
    """The second phase's calls and meshes, into ``results``; where it did not finish or wrote
    nonsense, each hidden case fails, in the grader's words (the sandbox's are never shown)."""
    why = {"timeout": f"did not finish them within {timeout:g} s", "invalid": f"{outcome.reason}"}
    try:
        second = protocol.read_results(work.out, hidden, work.artifacts, (HIDDEN_RESULTS, HIDDEN_ARTIFACTS))
        calls, meshes = second["tests"], second["meshes"]
    except protocol.ResultsError as err:
        reason = why.get(outcome.status) or ("stopped before them" if isinstance(err, protocol.NoResults) else str(err))
        calls, meshes = {}, {}
        failed: CallResult = {
            "status": "error",
            "message": f"the hidden cases were not run: the notebook's process {reason}",
        }
        calls.update({test_id: failed for test_id in hidden})
    results["tests"].update({k: v for k, v in calls.items() if k in hidden})
    results["meshes"] = {**meshes, **results["meshes"]}


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
    last = last_line(outcome.log_tail)
    return f"the notebook's process {why}" + (f"; its last output: {last[:300]}" if last != "no output" else "")
