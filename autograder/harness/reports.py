"""What a group of JAX processes said, turned into one error: which process crashed, and after a
hang, where each process was according to the stack it dumped. Shared by every engine that starts
the processes (the course's launcher, ``srun``, ``mpirun``), so their reports read the same."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from ..core.errors import JaxcourseError

STACK_SIGNAL = signal.SIGUSR1  # each worker dumps its Python stack on it (faulthandler)
_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
# Gloo announces every peer connection on CPU; the lines say nothing a student can act on.
NOISE = re.compile(r"^\[Gloo\] Rank \d+ is connected to \d+ peer ranks")
_WORKER = str(Path(__file__).with_name("launcher.py"))


class LaunchError(JaxcourseError, RuntimeError):
    """A process failed or the group hung; the message names the process and where it was."""


def crash_report(rank: int, code: int | str, lines: list[str], engine_says: str = "") -> str:
    said = f" ({engine_says})" if engine_says else ""
    return f"process {rank} exited with code {code}: {last_line(lines)}; the other processes were stopped{said}"


def hang_report(timeout: float, outputs: dict[int, str], finished: list[int], engine_says: str = "") -> str:
    """Say who never reached the collective, from the stack dumps in each live process's output."""
    waiting: list[str] = []
    elsewhere: list[str] = []
    for rank, output in sorted(outputs.items()):
        where, in_jax = _location(output)
        (waiting if in_jax else elsewhere).append(f"process {rank} ({where})")
    parts = [f"the group hung for {timeout:g} s"]
    if finished:
        parts.append(f"process {', '.join(map(str, finished))} finished without reaching what the others wait for")
    if elsewhere:
        parts.append("did not arrive: " + "; ".join(elsewhere))
    if waiting:
        parts.append("waiting inside JAX: " + "; ".join(waiting))
    if engine_says:
        parts.append(engine_says)
    return "; ".join(parts)


def _location(output: str) -> tuple[str, bool]:
    """Where the latest stack dump in ``output`` shows the process, and whether it is inside JAX."""
    dump = output.rsplit("most recent call first", 1)
    if len(dump) < 2:
        return "no stack dump", False
    frames = _FRAME.findall(dump[1])
    if any(func == "shutdown" and "distributed" in path for path, _, func in frames):
        return "finished, waiting at exit in jax.distributed.shutdown", True
    in_jax = any(_is_jax(path) for path, _, _ in frames)
    for path, line, func in frames:
        if not (_is_jax(path) or path == _WORKER or path.startswith("<frozen")):
            return f"{Path(path).name}:{line} in {func}", in_jax
    return "waiting for its result", in_jax


def _is_jax(path: str) -> bool:
    return f"{os.sep}jax{os.sep}" in path or f"{os.sep}jaxlib{os.sep}" in path


def last_line(lines: list[str]) -> str:
    said = [line.strip() for line in lines if line.strip()]
    return said[-1] if said else "no output"
