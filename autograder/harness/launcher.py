"""Run JAX in N processes x M simulated CPU devices: from a notebook (``launch(fn)``) or a shell
(``jaxcourse launch -n 2 -d 4 -- python x.py``), through the course's own launcher on localhost
or a ``Runner`` that starts them otherwise: a real cluster engine, ``srun`` or ``mpirun``
(``delivery/cluster_engines.py``, which the public ``launch(..., via=...)`` picks).

The local launcher gives each process ``JAX_COORDINATOR_ADDRESS`` (which JAX reads itself),
``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID`` and ``JAX_NUM_CPU_DEVICES``, so a script written for a
cluster launcher runs unchanged; under an engine JAX detects the cluster itself. Either way output
streams with each line's rank; a process that dies stops the group at once; a group that hangs is
stopped at the timeout, and the error names the process that did not arrive, from a stack dump of
every process.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import IO, Any

from .reports import NOISE, STACK_SIGNAL, LaunchError, crash_report, hang_report


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
            list(argv),
            env=process_env(rank, len(commands), devices, port),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
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
        if NOISE.match(line):
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
            raise LaunchError(crash_report(first.rank, first.popen.returncode, first.lines))
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
    return hang_report(timeout, {p.rank: "".join(p.lines) for p in running}, finished)


def _kill(proc: _Proc) -> None:
    if proc.popen.poll() is None:
        try:
            os.killpg(proc.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.popen.wait()


# ---------------------------------------------------------------- the public entry points


# What starts ``n`` copies of a command (the command, n, devices per process, timeout, where the
# lines go) and returns each rank's output: a cluster engine, in place of the course's launcher.
Runner = Callable[[Sequence[str], int, int, float, IO[str]], list[str]]

# The one way a cluster engine plugs into the core: an entry point in this group names a Runner
# that also answers ``ready()`` (the classroom package gives ``slurm`` and ``mpi``). The core never
# imports an engine, and a grading sandbox, which has none of the class, finds none to load.
ENGINES = "jaxcourse.engines"


def engine_runner(via: str) -> Runner | None:
    """What starts the processes for ``via``: None for the course's own launcher, else the
    installed engine of that name, loaded."""
    if via == "local":
        return None
    found = {e.name: e for e in entry_points(group=ENGINES)}
    if via not in found:
        raise LaunchError(f"unknown engine {via!r}: choose one of {', '.join(['local', *found])}")
    runner: Runner = found[via].load()
    return runner


def available_engines() -> list[str]:
    """The installed engines that can start processes on this machine now, in their order."""
    ready = [e.name for e in entry_points(group=ENGINES) if e.load().ready()]
    return sorted(ready, key=lambda name: name != "slurm")  # on a cluster with both, Slurm owns the nodes


def launch(
    target: Callable[..., Any] | str | Path,
    num_processes: int = 2,
    devices_per_process: int = 4,
    args: Sequence[Any] = (),
    timeout: float = 120.0,
    out: IO[str] | None = None,
    runner: Runner | None = None,
) -> list[Any]:
    """Run ``target`` in every process and return each process's result, by rank.

    A function (defined anywhere, a notebook cell too) runs after ``jax.distributed.initialize``
    and returns its value, with arrays this process can see copied to NumPy. A script path runs
    as ``__main__`` with ``args`` as its ``sys.argv[1:]``, initialises JAX itself, and gives back
    its output. ``runner`` starts the processes in place of the course's launcher.
    """
    if num_processes < 1 or devices_per_process < 1:
        raise ValueError("num_processes and devices_per_process must be at least 1")
    if callable(target):
        return _launch_function(target, num_processes, devices_per_process, args, timeout, out, runner)
    script = Path(target)
    if not script.is_file():
        raise FileNotFoundError(f"no script at {script}")
    command = command_for(["python", str(script), *map(str, args)])
    return run_processes(command, num_processes, devices_per_process, timeout, out, runner)


def run_processes(
    command: Sequence[str],
    n: int,
    devices: int,
    timeout: float,
    out: IO[str] | None = None,
    runner: Runner | None = None,
) -> list[str]:
    """The same command in ``n`` processes, started by ``runner`` (the course's launcher if None);
    each rank's output, by rank."""
    if runner is None:
        return run_group([command] * n, devices, timeout, out)
    return runner(command, n, devices, timeout, out or sys.stdout)


def _launch_function(
    fn: Callable[..., Any],
    n: int,
    devices: int,
    args: Sequence[Any],
    timeout: float,
    out: IO[str] | None,
    runner: Runner | None,
) -> list[Any]:
    """On a cluster of several hosts the temporary folder must be one every host sees (a shared
    file system); on one machine, as here, any will do."""
    import cloudpickle

    with tempfile.TemporaryDirectory(prefix="jaxcourse-launch-") as tmp:
        payload = Path(tmp) / "payload.pkl"
        payload.write_bytes(cloudpickle.dumps((fn, tuple(args))))
        worker = [sys.executable, *_site_flag(), "-m", "autograder.harness.launcher", "function", str(payload), tmp]
        run_processes(worker, n, devices, timeout, out, runner)
        return [cloudpickle.loads((Path(tmp) / f"{rank}.pkl").read_bytes()) for rank in range(n)]


def command_for(argv: Sequence[str]) -> list[str]:
    """A ``python script.py ...`` command runs through the worker, so that a hang can be located."""
    if len(argv) >= 2 and Path(argv[0]).name.startswith("python") and argv[1].endswith(".py"):
        return [sys.executable, *_site_flag(), "-m", "autograder.harness.launcher", "script", *argv[1:]]
    return list(argv)


def _site_flag() -> list[str]:
    """A process started without ``site`` (a local sandbox) starts its workers the same way."""
    return ["-S"] if sys.flags.no_site else []


def initialize() -> None:
    """``jax.distributed.initialize`` from the local launcher's environment (JAX reads the
    address), or with no arguments under ``srun`` or ``mpirun``, whose variables JAX detects."""
    import jax

    if "JAX_PROCESS_ID" not in os.environ:
        jax.distributed.initialize()
        return
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
    import jax

    result = cloudpickle.dumps(_to_host(fn(*args)))
    (Path(rest[0]) / f"{jax.process_index()}.pkl").write_bytes(result)


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
