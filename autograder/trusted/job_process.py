"""The trusted worker: compute reference records from the instructor's solutions (with each
case's closed-form targets beside them), or measure a submission's results (its exported
artifacts run on inputs made here from seeds) on the same mesh as the reference.

It runs in a process of its own, forked for each job by the warm worker (``forkserver.py``) or
started cold, so that a submission's program that never ends costs only a time limit.

    python -m autograder.trusted.job_process JOB_JSON
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.errors import JaxcourseError
from ..core.mesh import MeshSpec, mesh_signature, use_cpu_devices
from ..core.mlir_context import share_per_thread
from . import reference
from .jobs import (
    Counts,
    Done,
    MeasureJob,
    Progress,
    ProviderRef,
    Ready,
    ReferenceRun,
    References,
    Started,
    WorkerJob,
    waits,
)
from .judges import JUDGES

MESH_MISMATCH_EXIT = 3


class MeshMismatch(JaxcourseError):
    """The sandbox ran on a different mesh than the grader: a hard error, never a score."""


def reference_function(provider: ProviderRef, task: str) -> Callable[..., Any]:
    """The instructor's solution to ``task``: references exist only in the course's solutions/."""
    from ..core.course import Course
    from ..specs import find

    return Course(Path(provider["root"])).reference(find(provider["assignment"]), task)


def check_meshes(reported: dict[str, Any]) -> None:
    for name, theirs in reported.items():
        ours = mesh_signature(MeshSpec.parse(name).build())
        if theirs != ours:
            raise MeshMismatch(f"mesh {name}: the sandbox ran on {theirs}, the grader on {ours}")


# JAX's monitoring event for each program its compiler compiles, and what a profile calls it.
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
COMPILED = "programs compiled"


def count_compiles() -> dict[str, int]:
    """How many programs this process compiles, kept up to date as it does. None is kept on
    disk: a program handed in twice is measured once (the grader's ``MeasuredPrograms``), so a
    kept program would be written for every distinct one and read for none, its writes and
    JAX's scans of the growing folder a tenth of a distinct submission's measuring."""
    import jax.monitoring

    counts = {COMPILED: 0}

    def on_compile(event: str, duration_secs: float, **_: str | int) -> None:
        if event == COMPILE_EVENT:
            counts[COMPILED] += 1

    jax.monitoring.register_event_duration_secs_listener(on_compile)
    return counts


def store_references(job: ReferenceRun) -> None:
    refs = References(lambda name: reference_function(job["provider"], name))
    for test in job["tests"]:
        record, arrays = JUDGES[test["sig"]["kind"]].reference_record(test, refs)
        reference.save(test["store"], {**record, "targets": test["targets"]}, arrays)


def measure_submission(job: MeasureJob, compiled: dict[str, int]) -> None:
    """A line when the worker is ready, then one as each test starts and one with its measurement
    and how long it took: the grader times each test on its own clock, and a killed worker loses
    only the test it was on. Last, how many programs it compiled."""
    with open(job["progress"], "a") as progress:

        def write(line: Progress) -> None:
            progress.write(json.dumps(line) + "\n")
            progress.flush()

        write(Ready(ready_at=time.time()))
        verdicts: dict[str, bool] = {}
        for test in job["tests"]:
            write(Started(started=test["id"]))
            start = time.perf_counter()
            measured = waits(test.get("after", []), verdicts) or JUDGES[test["sig"]["kind"]].measure(test)
            verdicts[test["id"]] = measured["values"]["ok"]
            write(Done(id=test["id"], took=time.perf_counter() - start, measurement=measured))
        write(Counts(counts=compiled))


def main(argv: list[str]) -> int:
    job: WorkerJob = json.loads(Path(argv[0]).read_text())
    use_cpu_devices(job["num_devices"])
    share_per_thread()  # its lowerings reuse MLIR contexts (core/mlir_context.py)
    if job["mode"] == "reference":
        store_references(job)
        return 0
    compiled = count_compiles()
    try:
        check_meshes(job["meshes"])
    except MeshMismatch as err:
        print(f"jaxcourse: error: {err}", file=sys.stderr)
        return MESH_MISMATCH_EXIT
    measure_submission(job, compiled)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written: skip tearing down JAX's runtime
