"""The sandbox for strangers' code: one fresh container per submission, from the course's own
image (the environment the students used), locked down as below (docs/grading.md, "The sandbox").

No network, memory with swap equal to it, a CPU quota, a pids limit, a read-only root with tmpfs
for /tmp and home, every capability dropped, no new privileges, uid 1000, an init process, the job
mounted read-only and a fresh results directory. Two watchdogs: ``timeout`` inside the container
(it ends even if the grader is killed) and the grader's own wait, which kills the container.

With ``lanes``, a class's submissions run in that many long-lived containers (``lanes.py``), one
at a time in each, every one in a child of the container's server as a user of its own that
nothing outlives, and ``untrusted/lane.py`` removes all it wrote before the next: a class pays for
a container and its JAX once per lane. The cache's filling run, and any run no lane is free for,
gets a fresh container of its own.

The container imports the grader's own copy of the package's untrusted side (``core``, ``specs``,
``harness``, ``untrusted``), mounted read-only over the image's installed package: the runner is
the same code as the grader's reader, and the code that decides scores is not in the container.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.protocol import MAX_ARTIFACTS_BYTES, MAX_RESULTS_BYTES
from ...core.quick_compile import runner_env
from ...engine.containers import kill, remove, running
from ...untrusted.lane import HOMES
from .lanes import CAPABILITIES, Lane, LaneGone, LanePool, SandboxLost, engine_errors, lane_folder
from .limits import Limits
from .package import untrusted_package
from .sandbox import LOG_TAIL_BYTES, CompileCache, Outcome, exit_reason, runner_argv

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container

log = logging.getLogger(__name__)

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
LANE = "autograder.untrusted.lane"  # a lane's server
# A lane's IPC namespace outlives its jobs, and a System V segment, queue or semaphore set outlives
# the process that made it: in a lane none can be made (POSIX ones live in /dev/shm, emptied).
NO_SYSTEM_V_IPC = {"kernel.shmmni": "0", "kernel.msgmni": "0", "kernel.sem": "0 0 0 0", "fs.mqueue.queues_max": "0"}
GRACE = 5.0  # seconds the inside watchdog waits beyond the grader's, so the grader's fires first
LOG_BYTES = "1m"  # Docker keeps at most this much of a container's output
POLL = 0.25  # seconds between the watchdog's looks at the container
MAX_OUT_BYTES = MAX_RESULTS_BYTES + MAX_ARTIFACTS_BYTES  # more is refused anyway; stop it early
MAX_OUT_ENTRIES = 64  # the runner writes four files; a submission that writes many is stopped


class DockerSandbox:
    """Runs the runner in a container of ``image`` under ``limits``; with ``lanes``, in that many
    long-lived containers, started as a first run says which compile cache they are for."""

    name = "docker"
    isolates = True

    def __init__(self, image: str, limits: Limits, client: DockerClient | None = None, lanes: int = 0) -> None:
        from ...engine.images import connect

        self.image, self.limits, self.lanes = image, limits, lanes
        self.client = client or connect()
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.package = untrusted_package()
        _open_for_container(self.package)
        remove_orphans(self.client)
        self._pool: LanePool | None = None
        self._held: dict[Path, Lane] = {}  # workspaces on a lane, by folder
        self._lock = threading.Lock()

    def workspace(self, prefix: str) -> Path:
        """A submission's scratch folder; on a free lane, its ``job`` and ``out`` are links to the
        lane's, and nothing else in it is mounted."""
        folder = Path(tempfile.mkdtemp(prefix=prefix))
        lane = self._pool.take() if self._pool is not None else None
        if lane is not None:
            (folder / "job").symlink_to(lane.job)
            (folder / "out").symlink_to(lane.out)
            with self._lock:
                self._held[folder] = lane
        return folder

    def release(self, path: Path) -> None:
        """The workspace is done with: its lane, if it had one, is cleared for the next."""
        with self._lock:
            lane = self._held.pop(path, None)
        if lane is not None and self._pool is not None:
            self._pool.give_back(lane)

    def close(self) -> None:
        """Remove the lanes."""
        if self._pool is not None:
            self._pool.close()

    def run(self, job: Path, out: Path, timeout: float, cache: CompileCache | None = None) -> Outcome:
        with self._lock:
            lane = self._held.get(job.parent)
        if lane is not None and lane.cache == cache and (job, out) == (job.parent / "job", job.parent / "out"):
            _opened(lane.job, lane.out)
            try:
                return lane.run(timeout, self.limits.memory, _overfilled)
            except LaneGone:  # its server left first (ten idle minutes) or fell silent: nothing of the job ran
                _never_ran(lane)
        if self.lanes:
            # The first run says which cache the lanes are for: a class's first is the one that
            # fills it, after which every run only reads it. So the lanes start beside that run,
            # not after it, and its first submissions find them ready.
            read = replace(cache, writable=False) if cache is not None else None
            with self._lock:
                if self._pool is None:
                    self._pool = LanePool(self.lanes, lambda: self._start_lane(read), self._discard_lane)
        return self._run_cold(job.resolve(), out.resolve(), timeout, cache)

    def _start_lane(self, cache: CompileCache | None) -> Lane:
        """A lane for runs on ``cache``: its folders made and mounted, its server ready."""
        folder = lane_folder()
        job, out = folder / "job", folder / "out"
        _opened(job, out)
        settings = self._with_cache(self._settings(job, out, 0.0), cache)
        settings.update(
            entrypoint=["python", "-m", LANE],
            user="0:0",  # its server changes each child's user; the children keep no capability
            cap_add=CAPABILITIES,
        )
        settings["sysctls"] = NO_SYSTEM_V_IPC
        settings["environment"]["OPENBLAS_NUM_THREADS"] = "1"  # OpenBLAS's pool, a thread, would stop the fork
        settings["tmpfs"][HOMES] = f"size={self.limits.tmpfs},mode=1777"  # each child makes its home in it
        try:
            return Lane.start(self.client, folder, cache, {"image": self.image, **settings})
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)  # no job ran in it
            raise

    def _discard_lane(self, lane: Lane) -> None:
        """The lane's container and folder removed; where its engine no longer answers, both are
        left to the next grading run's ``remove_orphans`` and the grading goes on."""
        try:
            lane.close()
            shutil.rmtree(lane.folder, ignore_errors=True)
            if lane.folder.exists():  # what a child wrote, if its server could not clear it
                self.clear(lane.folder)
        except engine_errors() as err:
            log.warning(
                f"jaxcourse: a lane's container was left behind, the Docker engine did not answer ({err}): the next "
                "grading run on this host removes it"
            )
        shutil.rmtree(lane.folder, ignore_errors=True)

    def _with_cache(self, settings: dict[str, Any], cache: CompileCache | None) -> dict[str, Any]:
        if cache is not None:  # read-only, unless this run is the one that fills it
            settings["volumes"].append(f"{cache.path}:{XLA_CACHE}:{'rw' if cache.writable else 'ro'}")
            settings["environment"].update(cache.env(XLA_CACHE))
        return settings

    def _run_cold(self, job: Path, out: Path, timeout: float, cache: CompileCache | None) -> Outcome:
        """The job in a fresh container of its own, removed after it, with the time each step took."""
        _opened(job, out)
        settings = self._with_cache(self._settings(job, out, timeout), cache)
        if cache is not None:  # the container's user may write it during the run that fills it only
            cache.path.chmod(0o777 if cache.writable else 0o755)
        phases: dict[str, float] = {}
        begin = time.perf_counter()
        try:
            with running(self.client, image=self.image, **settings) as container:
                started, started_at = time.perf_counter(), time.time()
                phases["container create and start"] = started - begin
                outcome = self._wait(container, out, timeout)
                stopped = time.perf_counter()
                phases["container run"] = stopped - started
        finally:
            if cache is not None and cache.writable:
                cache.path.chmod(0o755)
        phases["container remove"] = time.perf_counter() - stopped
        return replace(outcome, started_at=started_at, phases=phases)

    def clear(self, path: Path) -> None:
        """Remove ``path``'s contents as root with only the rights to pass any file's mode and owner:
        whoever wrote them (a container's user, a lane's child as a user of its own) may have
        locked them (a folder of mode 0 that neither the grader's user nor the writer's can open).
        No code of a submission runs by then, and rm follows no link out of the folder."""
        script = "rm -rf /scratch/* /scratch/.[!.]* /scratch/..?*"
        with running(
            self.client,
            image=self.image,
            entrypoint=["sh", "-c", script],
            command=[],
            user="0:0",
            volumes=[f"{path}:/scratch:rw"],
            network_mode="none",
            cap_drop=["ALL"],
            cap_add=["DAC_OVERRIDE", "FOWNER"],
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

    def _settings(self, job: Path, out: Path, timeout: float) -> dict[str, Any]:
        """The container's options, its runner killed from inside ``GRACE`` seconds past ``timeout``."""
        from docker.types import LogConfig

        limits = self.limits
        watchdog = ["timeout", "--signal=KILL", f"{timeout + GRACE:g}"]
        return {
            "entrypoint": watchdog + runner_argv("python", "/job", "/out"),
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
            "healthcheck": {"test": ["NONE"]},  # the image's is JupyterLab's: no sandbox serves it
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


def _never_ran(lane: Lane) -> None:
    """The lane's container removed, whatever its server started with it, so that the job may run
    in a fresh one on the same folders; ``SandboxLost`` if the job wrote anything first."""
    remove(lane.container)
    if any(lane.out.iterdir()):
        raise SandboxLost("the lane's server fell silent after its job had started")


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
