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
from . import reference
from .jobs import (
    CacheCounts,
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


COMPILE_CACHE_BYTES = 2 << 30  # the trusted side's compiled programs kept on disk, at most
# JAX's monitoring events for the persistent compile cache, and what a profile calls them.
CACHE_EVENTS = {
    "/jax/compilation_cache/cache_hits": "compile cache hits",
    "/jax/compilation_cache/cache_misses": "compile cache misses",
}


def use_compile_cache(path: str, max_bytes: int = COMPILE_CACHE_BYTES) -> dict[str, int]:
    """Keep every compiled program: a class hands in many copies of the same few programs. At
    most ``max_bytes`` of them (JAX evicts the least recently used): a class of distinct programs,
    or one student's many, never fills the grader's disk. The counts of cache hits and misses,
    kept up to date as programs are compiled."""
    import jax
    import jax.monitoring

    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_compilation_cache_max_size", max_bytes)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    counts = dict.fromkeys(CACHE_EVENTS.values(), 0)

    def on_event(event: str, **_: Any) -> None:
        if event in CACHE_EVENTS:
            counts[CACHE_EVENTS[event]] += 1

    jax.monitoring.register_event_listener(on_event)
    return counts


def store_references(job: ReferenceRun) -> None:
    refs = References(lambda name: reference_function(job["provider"], name))
    for test in job["tests"]:
        record, arrays = JUDGES[test["sig"]["kind"]].reference_record(test, refs)
        reference.save(test["store"], {**record, "targets": test["targets"]}, arrays)


def measure_submission(job: MeasureJob, cache: dict[str, int]) -> None:
    """A line when the worker is ready, then one as each test starts and one with its measurement
    and how long it took: the grader times each test on its own clock, and a killed worker loses
    only the test it was on. Last, the compile cache's hits and misses."""
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
        write(CacheCounts(cache=cache))


def main(argv: list[str]) -> int:
    job: WorkerJob = json.loads(Path(argv[0]).read_text())
    use_cpu_devices(job["num_devices"])
    if job["mode"] == "reference":
        store_references(job)
        return 0
    cache = use_compile_cache(job["compile_cache"]) if job["compile_cache"] else {}
    try:
        check_meshes(job["meshes"])
    except MeshMismatch as err:
        print(f"jaxcourse: error: {err}", file=sys.stderr)
        return MESH_MISMATCH_EXIT
    measure_submission(job, cache)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written: skip tearing down JAX's runtime
