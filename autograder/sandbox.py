"""Where untrusted code runs. ``LocalSandbox``: a separate process with its own session, a clean
environment, a fresh working directory and a hard time limit. (A Docker sandbox with no network,
a read-only root and dropped capabilities comes with the class-grading issue.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

LOG_TAIL_BYTES = 2000


@dataclass(frozen=True)
class Outcome:
    """How a process ended: ``ok``, ``timeout`` or ``crashed``, with the tail of its output."""

    status: str
    returncode: int | None
    log_tail: str


def clean_env(home: Path) -> dict[str, str]:
    """Only what Python and JAX need: no tokens, no paths into the course, CPU devices only."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "JAX_PLATFORMS": "cpu",
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONSAFEPATH": "1",
    }


def run_process(
    argv: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    log: Path,
    progress: Path | None = None,
    stall: float | None = None,
    grace: float = 0.0,
) -> Outcome:
    """Run ``argv`` in a new session and kill its whole process group past ``timeout``, or when
    ``progress`` (a file the process appends to) has not grown for ``stall`` seconds (plus
    ``grace`` for start-up, before it first grows)."""
    start = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        size = progress.stat().st_size if progress is not None and progress.exists() else 0
        moved = start + grace
        while proc.poll() is None:
            now = time.monotonic()
            if progress is not None and progress.exists() and progress.stat().st_size != size:
                size, moved = progress.stat().st_size, now
            if now - start > timeout or (stall is not None and now - moved > stall):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return Outcome("timeout", None, _tail(log))
            time.sleep(0.05)
    code = proc.returncode
    return Outcome("ok" if code == 0 else "crashed", code, _tail(log))


def _tail(log: Path) -> str:
    with open(log, "rb") as f:
        f.seek(max(0, log.stat().st_size - LOG_TAIL_BYTES))
        return f.read().decode("utf-8", "replace")


class LocalSandbox:
    """Runs the runner as a separate local process."""

    name = "local"

    def run(self, workdir: Path, timeout: float) -> Outcome:
        out = workdir / "out"
        out.mkdir()
        argv = [sys.executable, "-m", "autograder.runner", str(workdir / "cells.json"),
                str(workdir / "plan.json"), str(out)]  # fmt: skip
        home = workdir / "home"
        home.mkdir()
        return run_process(argv, out, clean_env(home), timeout, workdir / "runner.log")
