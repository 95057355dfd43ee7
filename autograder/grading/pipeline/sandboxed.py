"""The stages of one submission's grading that face the sandbox (``stages.py`` declares them all, in
order): the job planned into the sandbox's workspace, run and sealed, and its results read back.
Each takes the last one's record and gives the next one's (``handoff.py``), or stops the
submission with a ``Stop``, the status and the reason its student reads."""

from __future__ import annotations

import json
from pathlib import Path

from ...core.profile import Stopwatch
from ...core.protocol import CELLS, HIDDEN_ARTIFACTS, HIDDEN_RESULTS, PLAN, CallResult, Cell, Plan, Results
from ...trusted import results as protocol
from ..sandbox.sandbox import Outcome, last_line
from ..sandbox.scratch import scratch
from ..sandbox.seal import HiddenPhase
from ..submission import notebooks as nbio
from .handoff import Checked, Grading, Job, Notebook, Ran, Setup, Stop, Workspace

HIDDEN_WAIT = 60.0  # seconds the runner waits for the hidden cases once its visible ones are out


def plan_job(grading: Grading, notebook: Notebook) -> Job:
    """The sandbox's workspace, held until the grading ends, with the notebook's cells and the
    plan of the visible calls; the references start in the background on the first submission,
    and the class's compile cache is filled by its first submission's grading."""
    setup = grading.setup
    box = setup.box()  # a grader made without a sandbox stops here
    setup.start_references()  # the first submission: computed while its sandbox runs
    with grading.watch.phase("sandbox compile cache"):  # filled by the first submission's grading too
        cache = setup.sandbox_cache
    root = grading.held.enter_context(scratch(f"jaxcourse-{grading.student}-", box))
    return Job(workspace(setup, nbio.code_cells(notebook.nb, setup.source), root), box, cache)


def workspace(setup: Setup, cells: list[Cell], root: Path, keep_going: bool = False) -> Workspace:
    """The sandbox's job folder (cells and the plan of the visible cases), its empty results
    folder, and the grader's own folder for the artifacts taken out of the results.
    ``keep_going``: run every cell and call nothing (filling the compile cache)."""
    folders = Workspace(root, root / "job", root / "out", root / "artifacts", root / "sealed")
    for folder in (folders.job, folders.out, folders.artifacts):
        folder.mkdir(exist_ok=True)  # on a lane, job and out are links to its empty folders
    (folders.job / CELLS).write_text(json.dumps(cells))
    visible = [] if keep_going else setup.calls(hidden=False)
    plan: Plan = {"num_devices": setup.num_devices, "tests": visible, "keep_going": keep_going}
    if not keep_going and any(p.case.hidden for p in setup.tests):
        plan["hidden_wait"] = HIDDEN_WAIT
    (folders.job / PLAN).write_text(json.dumps(plan))
    return folders


def run_sealed(grading: Grading, job: Job) -> Ran:
    """The notebook runs in the sandbox; once its visible results are out they are sealed, and
    only then does it learn the hidden cases. Until the seal, what it wrote and said may be shown."""
    work, watch, timeout = job.work, grading.watch, grading.setup.timeout
    hidden = grading.setup.calls(hidden=True)
    with watch.phase("sandbox: all"), HiddenPhase(work.job, work.out, work.sealed, hidden) as phase:
        outcome = job.box.run(work.job, work.out, timeout, job.cache)
    watch.update(outcome.phases, "sandbox: ")
    if outcome.status == "timeout" and not phase.is_sealed:
        raise Stop("timeout", f"the notebook did not finish within {timeout:g} s")
    if outcome.status == "invalid" and not phase.is_sealed:
        raise Stop("invalid", f"invalid results: the notebook's process {outcome.reason}")
    if phase.problem:  # what it wrote first could not be sealed, and so is never read
        raise Stop("invalid", f"invalid results: {phase.problem}")
    return Ran(outcome, work.sealed if phase.is_sealed else work.out, work)


def read_results(grading: Grading, ran: Ran) -> Checked:
    """Every test's call, checked: the visible ones from before the seal, the hidden ones after."""
    work, watch, setup = ran.work, grading.watch, grading.setup
    try:
        with watch.phase("results: read and check"):
            results = protocol.read_results(ran.visible, setup.ids(hidden=False), work.artifacts)
    except protocol.NoResults:
        raise Stop("crashed", _crash_message(ran.outcome)) from None
    except protocol.ResultsError as err:
        raise Stop("invalid", f"invalid results: {err}") from None
    _runner_phases(results, ran.outcome.started_at, watch)
    if results["notebook"]["status"] == "error":
        raise Stop("error", results["notebook"]["message"])
    hidden = setup.ids(hidden=True)
    if hidden:
        _add_hidden(results, ran.outcome, work, hidden, setup.timeout)
    return Checked(results, work)


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
