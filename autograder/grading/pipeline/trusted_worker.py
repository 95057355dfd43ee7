"""The trusted worker, driven: each submission's cases are measured in a worker process of their
own (``trusted/job_process.py``, forked warm by ``worker_process.py``), under a time limit per test; a
worker that hangs or crashes is blamed on the test it was on, and started again for the rest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ...core.errors import JaxcourseError
from ...core.profile import Stopwatch
from ...core.protocol import CallResult
from ...core.records import Measurement
from ...trusted.job_process import MESH_MISMATCH_EXIT
from ...trusted.jobs import Evaluation, MeasureJob, Progress
from ..sandbox.sandbox import Deadline, last_line
from .measured import MeasuredPrograms
from .plan import PlannedTest
from .worker_process import run_worker


class WorkerStopped(JaxcourseError):
    """The worker stopped before measuring every case, for no case's fault; ``pending``: the
    ids of the cases it left."""

    def __init__(self, message: str, pending: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.pending = pending


class MeshDiffers(WorkerStopped):
    """The sandbox ran on another mesh than the grader's: a hard error, never a score."""


@dataclass(frozen=True)
class TrustedWorker:
    work: Path  # the grading's own folder: the job file, the progress lines, the log
    num_devices: int
    startup: float  # seconds the worker may take to start before its first test
    test_timeout: float  # seconds one test may run

    def measure(
        self, pending: list[Evaluation], meshes: dict[str, Any], measured: MeasuredPrograms, watch: Stopwatch
    ) -> dict[str, Measurement]:
        """Each case's measurement, by test id; a case that hung or crashed the worker fails."""
        done: dict[str, Measurement] = {}
        progress = self.work / "evaluation.jsonl"
        while pending:
            job: MeasureJob = {
                "mode": "submission",
                "num_devices": self.num_devices,
                "meshes": meshes,
                "progress": str(progress),
                "tests": pending,
            }
            limit = self.startup + self.test_timeout * len(pending)
            # A test that makes no progress for test_timeout (plus start-up, for the first) is stuck.
            outcome = run_worker(job, self.work, "evaluate", Deadline(limit, progress, self.test_timeout, self.startup))
            if outcome.returncode == MESH_MISMATCH_EXIT:
                raise MeshDiffers(last_line(outcome.log_tail))
            found = _read_progress(progress)
            measured.remember(pending, meshes, found)
            done.update(found)
            _worker_phases(progress, outcome.started_at, watch)
            watch.update(outcome.phases, "trusted: ")  # a forked worker's CPU seconds
            progress.unlink(missing_ok=True)  # a worker started again for the rest writes anew
            pending = [t for t in pending if t["id"] not in done]
            if pending and outcome.status != "ok":
                done.update(_blame(pending, hung=outcome.status == "timeout"))
                pending = [t for t in pending if t["id"] not in done]
            elif pending:
                left = tuple(t["id"] for t in pending)
                raise WorkerStopped("the grader's worker stopped early: " + last_line(outcome.log_tail), left)
        return done


def _blame(pending: list[Evaluation], hung: bool) -> dict[str, Measurement]:
    """The first unmeasured test is the one that hung or crashed the worker. A hang blames its
    function's other cases too: an endless loop costs one limit."""
    stuck = pending[0]
    why = "did not finish" if hung else "crashed the grader's worker"
    blamed = [t for t in pending if t is stuck or (hung and t["sig"]["function"] == stuck["sig"]["function"])]
    return {t["id"]: {"values": {"ok": False, "message": f"the exported program {why}"}} for t in blamed}


def evaluation(
    planned: PlannedTest, reference: str, result: CallResult | None, after: Sequence[str] = ()
) -> Evaluation:
    """One case for the trusted worker: its call, seed and reference record, the cases whose
    values it waits for (a program at scale), and what the sandbox gave for it (an artifact's
    host path, a plain value, or why it gave neither)."""
    entry: Evaluation = {
        "id": planned.id,
        "sig": planned.sig,
        "seed": planned.seed,
        "reference": reference,
        "tolerance": list(planned.task.tolerance_for(planned.case.dtype)),
    }
    if after:
        entry["after"] = list(after)
    if planned.case.hidden:
        entry["hidden"] = True
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


def _progress_lines(path: Path) -> list[Progress]:
    """The worker's progress lines (written by the trusted worker itself, never by the sandbox)."""
    if not path.is_file():
        return []
    lines = []
    for line in path.read_text().splitlines():
        try:
            lines.append(cast(Progress, json.loads(line)))
        except ValueError:
            continue  # a line cut short by a killed worker
    return lines


def _read_progress(path: Path) -> dict[str, Measurement]:
    return {line["id"]: line["measurement"] for line in _progress_lines(path) if "id" in line}


def _worker_phases(path: Path, started_at: float, watch: Stopwatch) -> None:
    """The trusted worker's start-up (its process started until its meshes were built), each
    function's measurements (deserialize, refuse or compile, run, compare, census) and how many
    programs it compiled, from its progress lines."""
    for line in _progress_lines(path):
        if "ready_at" in line:
            watch.add("trusted: worker start-up", max(0.0, line["ready_at"] - started_at))
        elif "took" in line:
            watch.add(f"trusted: measure {line['id'].rsplit('/', 1)[0]}", line["took"])
        elif "counts" in line:
            for name, n in line["counts"].items():
                watch.count(name, n)
