"""The sandbox for strangers' code: one fresh container per submission, from the course's own
image (the environment the students used), locked down as below (docs/grading.md, "The sandbox").

No network, memory with swap equal to it, a CPU quota, a pids limit, a read-only root with tmpfs
for /tmp and home, every capability dropped, no new privileges, uid 1000, an init process, the job
mounted read-only and a fresh results directory. Two watchdogs: ``timeout`` inside the container
(it ends even if the grader is killed) and the grader's own wait, which kills the container.

With ``warm``, containers are started ahead of need (``warm.py``): each still serves one
submission and is removed after it.

The container imports the grader's own copy of the package's untrusted side (``core``, ``specs``,
``harness``, ``untrusted``), mounted read-only over the image's installed package: the runner is
the same code as the grader's reader, and the code that decides scores is not in the container.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.files import write_atomic
from ...core.protocol import MAX_ARTIFACTS_BYTES, MAX_RESULTS_BYTES, START
from ...core.quick_compile import runner_env
from ...engine.containers import kill, remove, removed_after, running
from .limits import Limits
from .package import untrusted_package
from .sandbox import LOG_TAIL_BYTES, CompileCache, Outcome, exit_reason, runner_argv
from .warm import IDLE, WarmPool, WarmSlot, WarmSpec

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container

# Where the image installs the packages (docker/Dockerfile: a venv of Python 3.11 in /opt/venv).
SITE = "/opt/venv/lib/python3.11/site-packages"
IMAGE_PACKAGE = f"{SITE}/autograder"
# The class and the command line, installed beside the core, hidden under empty read-only folders:
# nothing of them is in a sandbox (the hub's code, the queue's, a cluster engine).
HIDDEN = (f"{SITE}/classroom", f"{SITE}/jaxcourse")
GRADER_PACKAGE = "/opt/grader/autograder"
XLA_CACHE = "/xla"  # where the class's compile cache is mounted
LABEL = "jaxcourse.sandbox"  # value: "<host>:<grader pid>", so a later run can clear what a killed one left
HOME = "/home/jovyan"
GRACE = 5.0  # seconds the inside watchdog waits beyond the grader's, so the grader's fires first
LOG_BYTES = "1m"  # Docker keeps at most this much of a container's output
POLL = 0.25  # seconds between the watchdog's looks at the container
MAX_OUT_BYTES = MAX_RESULTS_BYTES + MAX_ARTIFACTS_BYTES  # more is refused anyway; stop it early
MAX_OUT_ENTRIES = 64  # the runner writes four files; a submission that writes many is stopped


class DockerSandbox:
    """Runs the runner in a container of ``image`` under ``limits``; with ``warm``, keeps that
    many containers started ahead, once a first run has said what they are for."""

    name = "docker"
    isolates = True

    def __init__(self, image: str, limits: Limits, client: DockerClient | None = None, warm: int = 0) -> None:
        from ...engine.images import connect

        self.image, self.limits, self.warm = image, limits, warm
        self.client = client or connect()
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.package = untrusted_package()
        _open_for_container(self.package)
        remove_orphans(self.client)
        self._pool: WarmPool | None = None
        self._held: dict[Path, WarmSlot] = {}  # workspaces handed out, by folder
        self._lock = threading.Lock()

    def workspace(self, prefix: str) -> Path:
        """A submission's scratch folder: a warm slot's, whose container waits for its job, or a new one."""
        slot = self._pool.take() if self._pool is not None else None
        if slot is None:
            return Path(tempfile.mkdtemp(prefix=prefix))
        with self._lock:
            self._held[slot.folder] = slot
        return slot.folder

    def release(self, path: Path) -> None:
        """The workspace is done with: its warm container, if its run never came, is removed."""
        with self._lock:
            slot = self._held.pop(path, None)
        if slot is not None:
            remove(slot.container)

    def close(self) -> None:
        """Remove the warm containers no submission took."""
        if self._pool is not None:
            self._pool.close()

    def run(self, job: Path, out: Path, timeout: float, cache: CompileCache | None = None) -> Outcome:
        spec = WarmSpec(timeout, cache)
        with self._lock:
            slot = self._held.pop(job.parent, None)
        if slot is not None and slot.spec == spec and (job, out) == (slot.folder / "job", slot.folder / "out"):
            outcome = self._run_warm(slot, job, out, timeout)
            if outcome is not None:
                return outcome
        elif slot is not None:
            remove(slot.container)
        outcome = self._run_cold(job, out, timeout, cache)
        if self.warm and not (cache is not None and cache.writable):  # the cache's filling run is once
            with self._lock:
                if self._pool is None:
                    self._pool = WarmPool(spec, self.warm, self._start_slot)
        return outcome

    def _start_slot(self, spec: WarmSpec) -> WarmSlot:
        """A container for ``spec``, started on an empty slot, its runner waiting for the job."""
        folder = Path(tempfile.mkdtemp(prefix="jaxcourse-warm-"))
        job, out = folder / "job", folder / "out"
        job.mkdir()
        out.mkdir()
        _opened(job, out)
        settings = self._with_cache(self._settings(job, out, spec.timeout, warm=IDLE), spec.cache)
        container = self.client.containers.run(detach=True, image=self.image, **settings)
        return WarmSlot(folder, container, spec, time.monotonic())

    def _run_warm(self, slot: WarmSlot, job: Path, out: Path, timeout: float) -> Outcome | None:
        """The job, handed to the slot's waiting runner; None if the container is gone (it is
        then run cold, in the same folders)."""
        container = slot.container
        container.reload()
        if container.status != "running":
            remove(container)
            return None
        _opened(job, out)
        write_atomic(job / START, "")
        (job / START).chmod(0o644)
        return self._run_in(removed_after(container), out, timeout, started_ahead=True)

    def _with_cache(self, settings: dict[str, Any], cache: CompileCache | None) -> dict[str, Any]:
        if cache is not None:  # read-only, unless this run is the one that fills it
            cache.path.chmod(0o777 if cache.writable else 0o755)
            settings["volumes"].append(f"{cache.path}:{XLA_CACHE}:{'rw' if cache.writable else 'ro'}")
            settings["environment"].update(cache.env(XLA_CACHE))
        return settings

    def _run_cold(self, job: Path, out: Path, timeout: float, cache: CompileCache | None) -> Outcome:
        _opened(job, out)
        settings = self._with_cache(self._settings(job, out, timeout), cache)
        return self._run_in(running(self.client, image=self.image, **settings), out, timeout, started_ahead=False)

    def _run_in(
        self, container_of: AbstractContextManager[Container], out: Path, timeout: float, started_ahead: bool
    ) -> Outcome:
        """How the container ``container_of`` gives (started on entry, removed on exit) ended, with
        the time each step took; the start is left out where it happened ahead of the job."""
        phases: dict[str, float] = {}
        begin = time.perf_counter()
        with container_of as container:
            started, started_at = time.perf_counter(), time.time()
            if not started_ahead:
                phases["container create and start"] = started - begin
            outcome = self._wait(container, out, timeout)
            stopped = time.perf_counter()
            phases["container run"] = stopped - started
        phases["container remove"] = time.perf_counter() - stopped
        return replace(outcome, started_at=started_at, phases=phases)

    def clear(self, path: Path) -> None:
        """Remove ``path``'s contents as the container's user, who owns what the code wrote and
        may have locked (a folder of mode 0 that the grader's user cannot open)."""
        path.chmod(0o777)  # the grader's own folder: the container's user may now remove its entries
        script = "chmod -R u+rwX /scratch 2>/dev/null; rm -rf /scratch/* /scratch/.[!.]* /scratch/..?*"
        with running(
            self.client,
            image=self.image,
            entrypoint=["sh", "-c", script],
            command=[],
            user="1000:100",
            volumes=[f"{path}:/scratch:rw"],
            network_mode="none",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            labels={LABEL: self.owner},
        ) as container:
            container.wait(timeout=120)

    def _wait(self, container: Container, out: Path, timeout: float) -> Outcome:
        """How the container ended; killed past ``timeout`` or when it writes too much."""
        import requests.exceptions

        deadline = time.monotonic() + timeout
        while True:
            try:
                code = container.wait(timeout=POLL)["StatusCode"]
                break
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                pass
            if time.monotonic() > deadline:
                kill(container)
                return Outcome("timeout", None, _logs(container))
            reason = _overfilled(out)
            if reason:
                kill(container)
                return Outcome("invalid", None, _logs(container), reason)
        container.reload()
        if container.attrs["State"].get("OOMKilled"):
            reason = f"ran out of memory (the limit is {self.limits.memory})"
            return Outcome("crashed", code, _logs(container), reason)
        return Outcome("ok" if code == 0 else "crashed", code, _logs(container), exit_reason(code))

    def _settings(self, job: Path, out: Path, timeout: float, warm: float = 0.0) -> dict[str, Any]:
        """The container's options; ``warm``: seconds its runner may wait for the job first."""
        from docker.types import LogConfig

        limits = self.limits
        watchdog = ["timeout", "--signal=KILL", f"{warm + timeout + GRACE:g}"]
        return {
            "entrypoint": watchdog + runner_argv("python", "/job", "/out", warm=warm),
            "command": [],
            "user": "1000:100",
            "working_dir": HOME,
            "environment": {
                "HOME": HOME,
                "JAX_PLATFORMS": "cpu",
                "MPLBACKEND": "Agg",
                "PYTHONPATH": "/opt/grader",
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONNOUSERSITE": "1",
                "PYTHONSAFEPATH": "1",
                **runner_env(),  # this grader's XLA flags: used if the image's jaxlib is the grader's
            },
            # The grader's own untrusted side, read-only, in place of the image's whole package.
            "volumes": [
                f"{job}:/job:ro",
                f"{out}:/out:rw",
                f"{self.package}:{GRADER_PACKAGE}:ro",
                f"{self.package}:{IMAGE_PACKAGE}:ro",
            ],
            "network_mode": "none",
            "mem_limit": limits.memory,
            "memswap_limit": limits.memory,
            "nano_cpus": int(limits.cpus * 1e9),
            "pids_limit": limits.pids,
            "read_only": True,
            "tmpfs": {
                "/tmp": f"size={limits.tmpfs},mode=1777",
                HOME: f"size={limits.tmpfs},mode=0700,uid=1000,gid=100",
                **{folder: "size=4k,mode=0555" for folder in HIDDEN},
            },
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "init": True,
            "labels": {LABEL: self.owner},
            "log_config": LogConfig(type="json-file", config={"max-size": LOG_BYTES, "max-file": "1"}),
        }


def _overfilled(out: Path) -> str:
    """Why ``out``, the one host directory the container can write, holds too much: more bytes
    than results may, or more entries (files, folders, links) than the runner ever writes; else
    ''. Counting stops at the limit, so a million empty files cost one look, not a million."""
    total, entries = 0, 0
    for root, folders, files in os.walk(out):
        entries += len(folders) + len(files)
        if entries > MAX_OUT_ENTRIES:
            return f"wrote more than {MAX_OUT_ENTRIES} files into its results directory"
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass  # removed while we looked
    if total > MAX_OUT_BYTES:
        return f"wrote more than {MAX_OUT_BYTES >> 20} MB into its results directory"
    return ""


def _opened(job: Path, out: Path) -> None:
    """The job readable by the container's user, the results folder writable by it."""
    _open_for_container(job)
    out.chmod(0o777)


def _open_for_container(folder: Path) -> None:
    """uid 1000 inside must read what is mounted for it, whoever runs the grader."""
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def _logs(container: Container) -> str:
    data: bytes = container.logs(stdout=True, stderr=True, tail=200)
    return data[-LOG_TAIL_BYTES:].decode("utf-8", "replace")


def remove_orphans(client: DockerClient) -> int:
    """Remove sandbox containers whose grader on this host is gone (killed mid-class)."""
    host = socket.gethostname()
    removed = 0
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        owner_host, _, pid = container.labels.get(LABEL, "").rpartition(":")
        if owner_host == host and pid.isdigit() and not _alive(int(pid)):
            remove(container)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
