"""Run JAX in N processes x M simulated CPU devices, coordinated by ``jax.distributed`` on
localhost: from a notebook (``launch(fn)``) or a shell (``jaxcourse launch -n 2 -d 4 -- python x.py``).

Each process gets ``JAX_COORDINATOR_ADDRESS`` (which JAX reads itself), ``JAX_NUM_PROCESSES``,
``JAX_PROCESS_ID`` and ``JAX_NUM_CPU_DEVICES``, so a script written for a cluster launcher runs
unchanged. Output streams with each line's rank; a process that dies stops the group at once;
a group that hangs is stopped at the timeout, and the error names the process that did not
arrive, from a stack dump of every process.
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core.errors import JaxcourseError

STACK_SIGNAL = signal.SIGUSR1
_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
# Gloo announces every peer connection on CPU; the lines say nothing a student can act on.
_NOISE = re.compile(r"^\[Gloo\] Rank \d+ is connected to \d+ peer ranks")


class LaunchError(JaxcourseError, RuntimeError):
    """A process failed or the group hung; the message names the process and where it was."""


@dataclass
class _Proc:
    rank: int
    popen: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def process_env(rank: int, num_processes: int, devices: int, port: int) -> dict[str, str]:
    return {
        **os.environ,
        "JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}",
        "JAX_NUM_PROCESSES": str(num_processes),
        "JAX_PROCESS_ID": str(rank),
        "JAX_NUM_CPU_DEVICES": str(devices),
        "JAX_PLATFORMS": "cpu",
        "PYTHONUNBUFFERED": "1",
    }


def run_group(
    commands: Sequence[Sequence[str]],
    devices: int,
    timeout: float,
    out: IO[str] | None = None,
) -> list[str]:
    """Start one command per rank; return each rank's output, or raise ``LaunchError``."""
    out = out or sys.stdout
    port = free_port()
    lock = threading.Lock()
    procs = []
    for rank, argv in enumerate(commands):
        popen = subprocess.Popen(
            list(argv), env=process_env(rank, len(commands), devices, port), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        proc = _Proc(rank, popen)
        proc.reader = threading.Thread(target=_pump, args=(proc, out, lock), daemon=True)
        proc.reader.start()
        procs.append(proc)
    try:
        _wait(procs, timeout)
    finally:
        for proc in reversed(procs):  # the coordinator (rank 0) last, so no one reports its loss
            _kill(proc)
    return ["".join(p.lines) for p in procs]


def _pump(proc: _Proc, out: IO[str], lock: threading.Lock) -> None:
    assert proc.popen.stdout is not None
    for line in proc.popen.stdout:
        proc.lines.append(line)
        if _NOISE.match(line):
            continue
        with lock:
            out.write(f"[process {proc.rank}] {line}")
            out.flush()


def _wait(procs: list[_Proc], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        codes = [p.popen.poll() for p in procs]
        failed = [p for p, code in zip(procs, codes) if code not in (None, 0)]
        if failed:
            first = failed[0]
            assert first.reader is not None  # started with the process
            first.reader.join(timeout=2)
            raise LaunchError(
                f"process {first.rank} exited with code {first.popen.returncode}: {_last_line(first)}; "
                "the other processes were stopped"
            )
        if all(code == 0 for code in codes):
            for p in procs:
                assert p.reader is not None  # started with the process
                p.reader.join(timeout=5)
            return
        if time.monotonic() > deadline:
            raise LaunchError(_hang_report(procs, timeout))
        time.sleep(0.05)


def _hang_report(procs: list[_Proc], timeout: float) -> str:
    """Ask every live process for its stack, then say who never reached the collective."""
    running = [p for p in procs if p.popen.poll() is None]
    for p in running:
        try:
            os.kill(p.popen.pid, STACK_SIGNAL)
        except ProcessLookupError:
            pass
    time.sleep(1.0)
    finished = [p.rank for p in procs if p.popen.poll() == 0]
    waiting: list[str] = []
    elsewhere: list[str] = []
    for p in running:
        where, in_jax = _location("".join(p.lines))
        (waiting if in_jax else elsewhere).append(f"process {p.rank} ({where})")
    parts = [f"the group hung for {timeout:g} s"]
    if finished:
        parts.append(f"process {', '.join(map(str, finished))} finished without reaching what the others wait for")
    if elsewhere:
        parts.append("did not arrive: " + "; ".join(elsewhere))
    if waiting:
        parts.append("waiting inside JAX: " + "; ".join(waiting))
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
        if not (_is_jax(path) or path == __file__ or path.startswith("<frozen")):
            return f"{Path(path).name}:{line} in {func}", in_jax
    return "waiting for its result", in_jax


def _is_jax(path: str) -> bool:
    return f"{os.sep}jax{os.sep}" in path or f"{os.sep}jaxlib{os.sep}" in path


def _last_line(proc: _Proc) -> str:
    lines = [line.strip() for line in proc.lines if line.strip()]
    return lines[-1] if lines else "no output"


def _kill(proc: _Proc) -> None:
    if proc.popen.poll() is None:
        try:
            os.killpg(proc.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.popen.wait()


# ---------------------------------------------------------------- the public entry points


def launch(
    target: Callable[..., Any] | str | Path,
    num_processes: int = 2,
    devices_per_process: int = 4,
    args: Sequence[Any] = (),
    timeout: float = 120.0,
    out: IO[str] | None = None,
) -> list[Any]:
    """Run ``target`` in every process and return each process's result, by rank.

    A function (defined anywhere, a notebook cell too) runs after ``jax.distributed.initialize``
    and returns its value, with arrays this process can see copied to NumPy. A script path runs
    as ``__main__`` with ``args`` as its ``sys.argv[1:]``, initialises JAX itself, and gives back
    its output.
    """
    if num_processes < 1 or devices_per_process < 1:
        raise ValueError("num_processes and devices_per_process must be at least 1")
    if callable(target):
        return _launch_function(target, num_processes, devices_per_process, args, timeout, out)
    script = Path(target)
    if not script.is_file():
        raise FileNotFoundError(f"no script at {script}")
    command = command_for(["python", str(script), *map(str, args)])
    return run_group([command] * num_processes, devices_per_process, timeout, out)


def _launch_function(
    fn: Callable[..., Any], n: int, devices: int, args: Sequence[Any], timeout: float, out: IO[str] | None
) -> list[Any]:
    import cloudpickle

    with tempfile.TemporaryDirectory(prefix="jaxcourse-launch-") as tmp:
        payload = Path(tmp) / "payload.pkl"
        payload.write_bytes(cloudpickle.dumps((fn, tuple(args))))
        commands = [
            [
                sys.executable,
                *_site_flag(),
                "-m",
                "autograder.harness.launch",
                "function",
                str(payload),
                str(Path(tmp) / f"{rank}.pkl"),
            ]
            for rank in range(n)
        ]
        run_group(commands, devices, timeout, out)
        return [cloudpickle.loads((Path(tmp) / f"{rank}.pkl").read_bytes()) for rank in range(n)]


def command_for(argv: Sequence[str]) -> list[str]:
    """A ``python script.py ...`` command runs through the worker, so that a hang can be located."""
    if len(argv) >= 2 and Path(argv[0]).name.startswith("python") and argv[1].endswith(".py"):
        return [sys.executable, *_site_flag(), "-m", "autograder.harness.launch", "script", *argv[1:]]
    return list(argv)


def _site_flag() -> list[str]:
    """A process started without ``site`` (a local sandbox) starts its workers the same way."""
    return ["-S"] if sys.flags.no_site else []


def initialize() -> None:
    """``jax.distributed.initialize`` from the launcher's environment (JAX reads the address)."""
    import jax

    jax.distributed.initialize(
        num_processes=int(os.environ["JAX_NUM_PROCESSES"]), process_id=int(os.environ["JAX_PROCESS_ID"])
    )


def _to_host(value: Any) -> Any:
    import jax
    import numpy as np

    def host(x: Any) -> Any:
        if isinstance(x, jax.Array):
            if x.is_fully_replicated:
                return np.asarray(x.addressable_data(0))  # every process holds the whole value
            if not x.is_fully_addressable:
                raise LaunchError(
                    "a returned array spans other processes; return process-local data, e.g. "
                    "jax.experimental.multihost_utils.process_allgather(x)"
                )
            return np.asarray(x)
        return x

    return jax.tree.map(host, value)


def _run(kind: str, path: str, rest: list[str]) -> None:
    if kind == "script":
        import runpy

        sys.argv = [path, *rest]
        runpy.run_path(path, run_name="__main__")
        return
    import cloudpickle

    fn, args = cloudpickle.loads(Path(path).read_bytes())
    initialize()
    Path(rest[0]).write_bytes(cloudpickle.dumps(_to_host(fn(*args))))


def _worker(argv: list[str]) -> None:
    """Inside each process: dump the stack on request, run the payload, and on an error exit at
    once: a normal exit would wait in jax.distributed's shutdown barrier for the others."""
    faulthandler.register(STACK_SIGNAL, all_threads=False)
    try:
        _run(argv[0], argv[1], argv[2:])
    except BaseException as err:  # report whatever the user's code raised, then leave now
        if isinstance(err, SystemExit) and err.code in (0, None):
            raise
        import traceback

        traceback.print_exc()
        sys.stdout.flush()
        os._exit(err.code if isinstance(err, SystemExit) and isinstance(err.code, int) else 1)


if __name__ == "__main__":
    _worker(sys.argv[1:])
