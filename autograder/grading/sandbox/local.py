"""The local sandbox: the runner as a process of the grader's own user (``ProcessSandbox``), cold
or forked from a warm server that imported JAX once (``untrusted/forkserver.py``)."""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

from ...core.quick_compile import runner_env
from .forked import ServerCommand, Shared
from .package import untrusted_pythonpath
from .sandbox import CompileCache, Deadline, Outcome, clean_env, run_process, runner_args, runner_argv

FORKSERVER = "autograder.untrusted.forkserver"


class ProcessSandbox:
    """The runner as a separate local process: for development and for a student's own check,
    where the code is one's own. It isolates nothing: the code can read and write what the
    grader's user can, and reach the network. It imports the same untrusted side as a container
    does, so a notebook that needs the trusted side fails here as it would there.

    With ``forks``, each runner is a child forked from a warm server (``untrusted/forkserver.py``)
    that imported JAX once for every run on the same compile cache: a class pays for JAX once,
    not per notebook. A run that may write the cache starts cold: there is one per class (the
    fill), and a student's own checks, which fill it as they go, leave no server in her kernel."""

    name = "process"
    isolates = False

    def __init__(self, forks: bool = True) -> None:
        self.forks = forks

    def workspace(self, prefix: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=prefix))

    def release(self, path: Path) -> None:
        """Nothing was started for it."""

    def close(self) -> None:
        """Nothing runs ahead: a warm server stays for the grading process's next run."""

    def run(self, job: Path, out: Path, timeout: float, cache: CompileCache | None = None) -> Outcome:
        """``cache`` is used as it is, read-only or not: nothing here could keep the code from it."""
        home = job.parent / "home"
        home.mkdir()
        log, deadline = job.parent / "runner.log", Deadline(timeout)
        if self.forks and (cache is None or not cache.writable):
            forked = warm_runner(cache).run(runner_args(job, out), home, log, deadline)
            if forked is not None:
                return forked
        argv = runner_argv(sys.executable, job, out, "-S")
        return run_process(argv, home, runner_process_env(home, cache), log, deadline)

    def clear(self, path: Path) -> None:
        """Nothing to add: the code ran as the grader's own user, who can remove all it wrote."""


def runner_process_env(home: Path, cache: CompileCache | None) -> dict[str, str]:
    """A local runner's environment: the clean one, this grader's XLA flags, the staged untrusted
    side alone on its path, and the class's compile cache."""
    env = {**clean_env(home), **runner_env(), "PYTHONPATH": untrusted_pythonpath()}
    env.update(cache.env(str(cache.path)) if cache else {})
    return env


_WARM_RUNNERS: dict[Path | None, Shared] = {}
_warm_runners_lock = threading.Lock()


def warm_runner(cache: CompileCache | None) -> Shared:
    """The grading process's warm runner for runs on ``cache`` (its settings are read as JAX is
    imported, so each cache has its own server)."""
    key = cache.path if cache else None
    with _warm_runners_lock:
        if key not in _WARM_RUNNERS:

            def command() -> ServerCommand:
                # HOME is the server's own folder; OpenBLAS's pool, a thread, would stop the fork
                # (a notebook's NumPy then runs on one thread, as its programs' inputs are small).
                env = {**runner_process_env(Path("/"), cache), "OPENBLAS_NUM_THREADS": "1"}
                return ServerCommand([sys.executable, "-S", "-m", FORKSERVER], env, "the warm runner")

            _WARM_RUNNERS[key] = Shared(command)
        return _WARM_RUNNERS[key]
