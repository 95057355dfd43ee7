"""The trusted worker's processes, and the one function that runs a job in one (``run_worker``).

Each job runs in a child forked by the trusted side's warm server (``trusted/forkserver.py``,
driven by ``sandbox/forked.py``) that has imported JAX and the judges once for the whole grading
process: a job pays for neither, and still has a process of its own, killed as a group when it
hangs or crashes, as a cold process would be. Where no server can start, jobs run cold.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ...core.files import write_atomic
from ...core.quick_compile import runner_env
from ...trusted.jobs import WorkerJob
from ..sandbox.forked import ServerCommand, Shared
from ..sandbox.package import ROOT
from ..sandbox.sandbox import Deadline, Outcome, clean_env, run_process

WORKER = "autograder.trusted.job_process"
FORKSERVER = "autograder.trusted.forkserver"


def trusted_env(home: Path) -> dict[str, str]:
    """The sandbox's clean environment, with this very package first on the path: a checkout run
    through ``PYTHONPATH`` and never installed (as the GPU check runs it) is what its workers import;
    and the XLA flags this jaxlib knows, asked once for the runners too, so that no job compiles a
    probe to learn its compile options (``quick_compile.known_options``)."""
    return {**clean_env(home), **runner_env(), "PYTHONPATH": str(ROOT.parent)}


def server_command() -> ServerCommand:
    env = {**trusted_env(Path("/")), "OPENBLAS_NUM_THREADS": "1"}  # HOME is the server's own folder
    return ServerCommand([sys.executable, "-m", FORKSERVER], env, "the warm trusted worker")


SHARED = Shared(server_command)


def run_worker(job: WorkerJob, work: Path, name: str, deadline: Deadline) -> Outcome:
    """Run ``job`` (its file ``work/name.json``, its output in ``work/name.log``) in a worker of its
    own, killed when ``deadline`` passes."""
    path, log = work / f"{name}.json", work / f"{name}.log"
    write_atomic(path, json.dumps(job))
    forked = SHARED.run([str(path)], work, log, deadline)
    if forked is not None:
        return forked
    argv = [sys.executable, "-m", WORKER, str(path)]
    return run_process(argv, work, trusted_env(work), log, deadline)
