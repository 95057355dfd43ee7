"""The real cluster engines: run one command as N tasks under ``srun`` (Slurm) or ``mpirun``
(Open MPI), where ``jax.distributed.initialize()`` finds its coordinator, process count and id by
itself. Each task's lines come back with its rank, a crash is named from the engine's own report,
and a hang is located with the engine's tools (``scancel --signal``, ``scontrol listpids``; Open
MPI's ``mpirun`` forwards SIGUSR1 to every process), in the words of the course's launcher.

They plug into the launcher (``harness/launcher.py``) as a ``Runner``; the harness itself knows
none of them, so none is mounted into a grading sandbox, where only the local launcher runs."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, ClassVar

from autograder.harness.reports import NOISE, STACK_SIGNAL, LaunchError, crash_report, hang_report

# What the course's own launcher tells each process; under an engine JAX must find these itself.
LAUNCHER_VARS = ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID")


def _added(devices: int) -> dict[str, str]:
    """The simulated devices per process (JAX reads ``JAX_NUM_CPU_DEVICES`` as its config), on CPU,
    with output that streams."""
    return {"JAX_NUM_CPU_DEVICES": str(devices), "JAX_PLATFORMS": "cpu", "PYTHONUNBUFFERED": "1"}


EXPORTED = tuple(_added(1))  # what an engine must carry to tasks on other hosts


def task_env(devices: int) -> dict[str, str]:
    """The environment every task starts from: this one, less the launcher's coordinates."""
    return {**{k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}, **_added(devices)}


@dataclass(frozen=True)
class Crash:
    rank: int
    code: str
    said: str  # the engine's own words


class Engine:
    """How one cluster engine starts, labels, inspects and stops a group of tasks."""

    name: ClassVar[str]
    program: ClassVar[str]
    setup: ClassVar[str]  # what makes it ready on a Debian machine

    def argv(self, command: Sequence[str], n: int, job: str) -> list[str]:
        raise NotImplementedError

    def pieces(self, line: str) -> list[tuple[int | None, str]]:
        """The text in one line of the engine's output, by the task it came from (None: the
        engine's own words), labels removed. A piece may be part of a task's line."""
        raise NotImplementedError

    def crash(self, said: str) -> Crash | None:
        raise NotImplementedError

    def request_stacks(self, popen: subprocess.Popen[str], job: str) -> None:
        raise NotImplementedError

    def running(self, job: str) -> tuple[set[int] | None, str]:
        """The ranks still running, if the engine can tell, and how it was asked."""
        return None, ""

    def stop(self, popen: subprocess.Popen[str], job: str) -> None:
        raise NotImplementedError

    def ready(self) -> bool:
        """Whether this engine can start processes here now."""
        return shutil.which(self.program) is not None

    def __call__(self, command: Sequence[str], n: int, devices: int, timeout: float, out: IO[str]) -> list[str]:
        """The engine as the launcher's Runner (its entry point in ``jaxcourse.engines``)."""
        return run_engine(self, command, n, devices, timeout, out)

    def require(self) -> None:
        if not self.ready():
            raise LaunchError(
                f"--via {self.name} needs {self.program}, which is not ready: {self.setup} (or use --via local)"
            )


class Slurm(Engine):
    name, program = "slurm", "srun"
    setup = "apt-get install -y slurm-wlm munge, then jaxcourse cluster up (as root)"
    _LABEL = re.compile(r"^\s*(\d+): ?(.*)$", re.S)
    _EXITED = re.compile(r"tasks? (\d+)[-,\d]*: Exited with exit code (\d+)")
    _ENDED = re.compile(r"tasks? (\d+)[-,\d]*: (.+)")

    def argv(self, command: Sequence[str], n: int, job: str) -> list[str]:
        # --overcommit: the course runs more processes than this machine has cores;
        # --kill-on-bad-exit: one task that fails stops the step, as the local launcher does.
        return [
            "srun",
            f"--ntasks={n}",
            "--overcommit",
            "--kill-on-bad-exit=1",
            "--label",
            f"--job-name={job}",
            "--export=ALL",
            *command,
        ]

    def pieces(self, line: str) -> list[tuple[int | None, str]]:
        match = self._LABEL.match(line)  # srun passes on whole lines
        return [(int(match[1]), match[2])] if match else [(None, line)]

    def ready(self) -> bool:
        """``srun`` is installed and a controller answers with a partition that is up."""
        return super().ready() and "up" in _ask(["sinfo", "--noheader", "--responding", "--format=%a"]).split()

    def crash(self, said: str) -> Crash | None:
        match = self._EXITED.search(said) or self._ENDED.search(said)
        return Crash(int(match[1]), match[2].strip(), match[0].strip()) if match else None

    def _step(self, job: str) -> str | None:
        found = _ask(["squeue", "--noheader", "--steps", f"--name={job}", "--format=%i"]).split()
        return found[0] if found else None

    def request_stacks(self, popen: subprocess.Popen[str], job: str) -> None:
        step = self._step(job)
        if step:
            _ask(["scancel", f"--signal={STACK_SIGNAL.name.removeprefix('SIG')}", step])

    def running(self, job: str) -> tuple[set[int] | None, str]:
        step = self._step(job)
        if step is None:
            return None, ""
        rows = [line.split() for line in _ask(["scontrol", "listpids", step]).splitlines()[1:]]
        ranks = {int(row[4]) for row in rows if len(row) >= 5 and row[4].isdigit()}
        return ranks, f"Slurm step {step}: scontrol listpids shows task {_listed(ranks)} still running"

    def stop(self, popen: subprocess.Popen[str], job: str) -> None:
        if popen.poll() is None:
            step = self._step(job)
            if step:
                _ask(["scancel", "--quiet", step])
        _end(popen, grace=10)


class Mpi(Engine):
    name, program = "mpi", "mpirun"
    setup = "apt-get install -y openmpi-bin"
    _TAG = re.compile(r"\[\d+,(\d+)\]<std(?:out|err)>:")
    _EXITED = re.compile(r"Process name: \[\[\d+,\d+\],(\d+)\]\s+Exit code:\s+(\d+)")
    _SIGNALLED = re.compile(r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+ \([^)]*\))")

    def argv(self, command: Sequence[str], n: int, job: str) -> list[str]:
        # --oversubscribe: more processes than cores; -x: the variables reach tasks on other hosts too.
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        exported = [arg for var in EXPORTED for arg in ("-x", var)]
        return ["mpirun", "-n", str(n), "--oversubscribe", "--tag-output", *root, *exported, *command]

    def pieces(self, line: str) -> list[tuple[int | None, str]]:
        """mpirun tags each write, not each line: a stack dump arrives as many tagged pieces on one line."""
        parts = self._TAG.split(line)
        tagged: list[tuple[int | None, str]] = [(int(r), text) for r, text in zip(parts[1::2], parts[2::2])]
        return [(None, parts[0]), *tagged] if parts[0] else tagged

    def crash(self, said: str) -> Crash | None:
        match = self._EXITED.search(said) or self._SIGNALLED.search(said)
        if match is None:
            return None
        words = " ".join(match[0].split())
        return Crash(int(match[1]), match[2], f"mpirun: first to fail: {words}")

    def request_stacks(self, popen: subprocess.Popen[str], job: str) -> None:
        popen.send_signal(STACK_SIGNAL)  # mpirun forwards SIGUSR1 to every process of the job

    def stop(self, popen: subprocess.Popen[str], job: str) -> None:
        if popen.poll() is None:
            popen.terminate()  # mpirun stops its processes on SIGTERM
        _end(popen, grace=5)


SLURM, MPI = Slurm(), Mpi()  # the entry points of jaxcourse.engines
ENGINES: dict[str, Engine] = {e.name: e for e in (SLURM, MPI)}
VIAS = ("local", *ENGINES)  # who may start a group of processes: the course's launcher, or an engine


def _ask(argv: list[str]) -> str:
    """A question to the engine's tools; no answer is an empty one (the job may have ended)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=15).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _listed(ranks: set[int]) -> str:
    return ", ".join(map(str, sorted(ranks))) if ranks else "none"


def _end(popen: subprocess.Popen[str], grace: float) -> None:
    try:
        popen.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        popen.wait()


@dataclass
class _Streams:
    """Each task's lines, and the engine's own, as they arrive."""

    n: int
    engine: Engine
    out: IO[str]
    ranks: dict[int, list[str]] = field(default_factory=dict)
    own: list[str] = field(default_factory=list)
    pending: dict[int | None, str] = field(default_factory=dict)

    def pump(self, stream: IO[str]) -> None:
        for raw in stream:
            for source, text in self.engine.pieces(raw):
                *lines, rest = (self.pending.pop(source, "") + text).split("\n")
                if rest:
                    self.pending[source] = rest
                for line in lines:
                    self._emit(source, line + "\n")
        for source, rest in self.pending.items():
            self._emit(source, rest + "\n")

    def _emit(self, source: int | None, line: str) -> None:
        if source is None:
            self.own.append(line)
            self.out.write(f"[{self.engine.program}] {line}")
        else:
            self.ranks.setdefault(source, []).append(line)
            if NOISE.match(line):
                return
            self.out.write(f"[process {source}] {line}")
        self.out.flush()


def run_engine(engine: Engine, command: Sequence[str], n: int, devices: int, timeout: float, out: IO[str]) -> list[str]:
    """Run ``command`` as ``n`` tasks under ``engine``; return each rank's output, or raise ``LaunchError``."""
    engine.require()
    job = f"jaxcourse-{uuid.uuid4().hex[:8]}"
    popen = subprocess.Popen(
        engine.argv(command, n, job),
        env=task_env(devices),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    streams = _Streams(n, engine, out)
    assert popen.stdout is not None
    reader = threading.Thread(target=streams.pump, args=(popen.stdout,), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + timeout
        while popen.poll() is None:
            if time.monotonic() > deadline:
                raise LaunchError(_hang(engine, popen, job, streams, timeout))
            time.sleep(0.05)
        reader.join(timeout=5)
        if popen.returncode != 0:
            raise LaunchError(_crashed(engine, popen, streams))
    finally:
        engine.stop(popen, job)
    return ["".join(streams.ranks.get(rank, [])) for rank in range(n)]


def _crashed(engine: Engine, popen: subprocess.Popen[str], streams: _Streams) -> str:
    crash = engine.crash("".join(streams.own))
    if crash is None:
        return f"{engine.program} exited with code {popen.returncode}: {''.join(streams.own).strip() or 'no output'}"
    return crash_report(crash.rank, crash.code, streams.ranks.get(crash.rank, []), crash.said)


def _hang(engine: Engine, popen: subprocess.Popen[str], job: str, streams: _Streams, timeout: float) -> str:
    running, said = engine.running(job)
    engine.request_stacks(popen, job)
    time.sleep(1.0)
    live = set(range(streams.n)) if running is None else running
    finished = sorted(set(range(streams.n)) - live)
    outputs = {rank: "".join(streams.ranks.get(rank, [])) for rank in sorted(live)}
    return hang_report(timeout, outputs, finished, said)


@dataclass(frozen=True)
class BatchJob:
    """A job handed to Slurm's queue: its id and the file its output goes to."""

    job_id: str
    output: Path


def submit_batch(command: Sequence[str], n: int, devices: int, output_dir: Path) -> BatchJob:
    """``sbatch`` a job whose one step runs ``command`` as ``n`` tasks; return at once."""
    slurm = Slurm()
    slurm.require()
    job = f"jaxcourse-{uuid.uuid4().hex[:8]}"
    output = output_dir.resolve() / "jaxcourse-%j.out"
    argv = [
        "sbatch",
        "--parsable",
        f"--ntasks={n}",
        "--overcommit",
        f"--job-name={job}",
        f"--output={output}",
        "--wrap",
        shlex.join(slurm.argv(command, n, job)),
    ]
    done = subprocess.run(argv, env=task_env(devices), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise LaunchError(f"sbatch refused the job: {done.stderr.strip() or done.stdout.strip()}")
    job_id = done.stdout.strip().split(";")[0]
    return BatchJob(job_id, Path(str(output).replace("%j", job_id)))
