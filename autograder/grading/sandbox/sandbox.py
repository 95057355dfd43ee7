"""Where untrusted code runs, and how a run ended.

A sandbox runs the runner (``python -m autograder.untrusted.runner JOB/cells.json JOB/plan.json OUT``) on a
job directory it may only read and a fresh results directory it may write, under a time limit.
``ProcessSandbox`` (``local.py``) is a separate local process with its own session and a clean
environment: it keeps a hung notebook from hanging the grader, and isolates nothing else.
``DockerSandbox`` (``docker_sandbox.py``) is the one for strangers' code.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...core.protocol import CELLS, PLAN

LOG_TAIL_BYTES = 2000
RUNNER = "autograder.untrusted.runner"


@dataclass(frozen=True)
class Outcome:
    """How a process ended: ``ok``, ``timeout``, ``crashed`` or ``invalid`` (stopped for what it
    wrote), with the tail of its output and, for the last two, why in words; when it was started
    (wall clock) and how long the sandbox's own steps took, for a profile."""

    status: str
    returncode: int | None
    log_tail: str
    reason: str = ""
    started_at: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CompileCache:
    """A folder of compiled XLA programs that JAX in the sandbox loads instead of compiling:
    filled once per class from the notebook's public cells (``writable``), then only read, so
    every submission's demo cells find their programs there and no submission adds to it."""

    path: Path
    writable: bool = False

    def env(self, path: str) -> dict[str, str]:
        """JAX's settings for a cache at ``path`` as the sandbox sees it: every program kept."""
        return {
            "JAX_COMPILATION_CACHE_DIR": path,
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        }


class Sandbox(Protocol):
    name: str
    isolates: bool  # whether the code inside is kept from the network, the files and the machine

    def workspace(self, prefix: str) -> Path:
        """A new folder for one submission's job and results (``job/`` and ``out/`` in it)."""
        ...

    def release(self, path: Path) -> None:
        """``path``, a workspace, is done with (run or not)."""
        ...

    def run(self, job: Path, out: Path, timeout: float, cache: CompileCache | None = None) -> Outcome: ...

    def close(self) -> None:
        """No more runs: whatever was started ahead of them is removed."""
        ...

    def clear(self, path: Path) -> None:
        """Remove what the code inside left under ``path`` that the grader's user cannot."""
        ...


def exit_reason(code: int | None) -> str:
    """An exit status in words: ``-11`` or ``139`` (a shell's 128 + 11) is a segmentation fault."""
    if code is None or code == 0:
        return "" if code == 0 else "was stopped"
    number = -code if code < 0 else code - 128 if code > 128 else 0
    if number:
        try:
            return f"was killed by signal {number} ({signal.Signals(number).name})"
        except ValueError:
            return f"was killed by signal {number}"
    return f"exited with status {code}"


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


class Watched(Protocol):
    """A process as ``watch`` needs it: ``subprocess.Popen``, or a child of the warm worker."""

    pid: int  # and its process group's

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


@dataclass(frozen=True)
class Deadline:
    """When a process is killed: past ``timeout`` in all, or when ``progress`` (a file it appends
    to) has not grown for ``stall`` seconds (plus ``grace`` for start-up, before it first grows)."""

    timeout: float
    progress: Path | None = None
    stall: float | None = None
    grace: float = 0.0


def run_process(argv: Sequence[str], cwd: Path, env: dict[str, str], log: Path, deadline: Deadline) -> Outcome:
    """Run ``argv`` in a new session, its output into ``log``, under ``watch``."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return watch(proc, log, deadline)


def watch(proc: Watched, log: Path, deadline: Deadline) -> Outcome:
    """How ``proc`` ended; its whole process group killed when ``deadline`` passes."""
    start, started_at = time.monotonic(), time.time()
    progress, stall = deadline.progress, deadline.stall
    size = progress.stat().st_size if progress is not None and progress.exists() else 0
    moved = start + deadline.grace
    while proc.poll() is None:
        now = time.monotonic()
        if progress is not None and progress.exists() and progress.stat().st_size != size:
            size, moved = progress.stat().st_size, now
        if now - start > deadline.timeout or (stall is not None and now - moved > stall):
            kill_group(proc.pid)
            proc.wait()
            return Outcome("timeout", None, _tail(log), started_at=started_at)
        time.sleep(0.05)
    code = proc.wait()
    return Outcome("ok" if code == 0 else "crashed", code, _tail(log), exit_reason(code), started_at)


def kill_group(pid: int) -> None:
    """SIGKILL the process's group; the process alone if it has not made its group yet."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def last_line(text: str) -> str:
    """The last line of a process's output that says something."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def _tail(log: Path) -> str:
    if not log.is_file():  # a process that died before it opened its log
        return ""
    with open(log, "rb") as f:
        f.seek(max(0, log.stat().st_size - LOG_TAIL_BYTES))
        return f.read().decode("utf-8", "replace")


def runner_argv(python: str, job: Path | str, out: Path | str, *flags: str) -> list[str]:
    """The runner's command line."""
    return [python, *flags, "-m", RUNNER, *runner_args(job, out)]


def runner_args(job: Path | str, out: Path | str) -> list[str]:
    """The runner's own arguments: its job's cells and plan, and where its results go."""
    return [f"{job}/{CELLS}", f"{job}/{PLAN}", str(out)]
