"""The trusted worker's processes, and the one function that runs a job in one (``run_worker``).

Each job runs in a child forked by a warm server (``trusted/forkserver.py``) that has imported JAX
and the judges once for the whole grading process: a job pays for neither, and still has a
process of its own, killed as a group when it hangs or crashes, as a cold process would be. The
server runs nothing itself, so nothing a job does can wear it out; a server that dies takes its
children with it, and each of their jobs runs again, once, in a new server's child (the death
was the server's, not the job's). One that cannot start (its imports started a thread) leaves
the jobs to cold processes, said once.
"""

from __future__ import annotations

import atexit
import json
import logging
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ...core.errors import JaxcourseError
from ...core.files import write_atomic
from ...trusted.jobs import ForkRequest, WorkerJob
from ..sandbox.package import ROOT
from ..sandbox.sandbox import Deadline, Outcome, clean_env, kill_group, last_line, run_process, watch

log = logging.getLogger(__name__)

WORKER = "autograder.trusted.job_process"
FORKSERVER = "autograder.trusted.forkserver"
START_TIMEOUT = 60.0  # seconds the server may take to import JAX and say it is ready
KILLED = -9  # the status of a child whose server died under it: its group is killed


def trusted_env(home: Path) -> dict[str, str]:
    """The sandbox's clean environment, with this very package first on the path: a checkout run
    through ``PYTHONPATH`` and never installed (as the GPU check runs it) is what its workers import."""
    return {**clean_env(home), "PYTHONPATH": str(ROOT.parent)}


class ServerGone(JaxcourseError):
    """The warm server stopped, or never started; its log's last lines say why."""


@dataclass
class ForkServer:
    """One warm server: requests out on its stdin, events back on its stdout, read by a thread."""

    proc: subprocess.Popen[bytes]
    home: Path
    exits: dict[int, int] = field(default_factory=dict)  # pid -> exit status
    forked: dict[int, int] = field(default_factory=dict)  # tag -> pid
    live: set[int] = field(default_factory=set)
    orphans: set[int] = field(default_factory=set)  # children killed because the server died
    changed: threading.Condition = field(default_factory=threading.Condition)
    gone: bool = False
    tags: int = 0

    @classmethod
    def start(cls) -> ForkServer:
        home = Path(tempfile.mkdtemp(prefix="jaxcourse-forkserver-"))
        env = {**trusted_env(home), "OPENBLAS_NUM_THREADS": "1"}
        with open(home / "server.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", FORKSERVER],
                cwd=home,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        server = cls(proc, home)
        assert proc.stdout is not None
        ready = _read_line(proc.stdout, START_TIMEOUT)
        if ready is None or "ready" not in ready:
            said = server.log_tail()  # read before stop() removes its folder
            server.stop()
            raise ServerGone(f"the warm trusted worker did not start: {said}")
        threading.Thread(target=server._read_events, daemon=True).start()
        return server

    def fork(self, job: Path, cwd: Path, log: Path) -> ForkedChild:
        """A child running ``job``; ``ServerGone`` if the server is."""
        with self.changed:
            if self.gone:
                raise ServerGone(f"the warm trusted worker stopped: {self.log_tail()}")
            self.tags += 1
            tag = self.tags
            request: ForkRequest = {"tag": tag, "job": str(job), "cwd": str(cwd), "log": str(log)}
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
            except OSError:
                self.gone = True
                raise ServerGone(f"the warm trusted worker stopped: {self.log_tail()}") from None
            self.changed.wait_for(lambda: tag in self.forked or self.gone)
            if tag not in self.forked:
                raise ServerGone(f"the warm trusted worker stopped: {self.log_tail()}")
            return ForkedChild(self, self.forked.pop(tag))

    def _read_events(self) -> None:
        """Each event as it comes, until the server's stdout closes; a line that is not an event
        (nothing of ours writes one) is taken as the server gone wrong, and it is stopped."""
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                event = json.loads(line)
                with self.changed:
                    if "tag" in event:
                        self.forked[event["tag"]] = event["pid"]
                        self.live.add(event["pid"])
                    else:
                        self.exits[event["pid"]] = event["status"]
                        self.live.discard(event["pid"])
                    self.changed.notify_all()
        except (ValueError, KeyError, TypeError):
            kill_group(self.proc.pid)
        with self.changed:  # the server died: its children are killed, and count as killed
            self.gone = True
            for pid in self.live:
                kill_group(pid)
                self.exits[pid] = KILLED
            self.orphans |= self.live
            self.live.clear()
            self.changed.notify_all()

    def log_tail(self) -> str:
        """The last line the server wrote on stderr: a traceback's says what went wrong."""
        path = self.home / "server.log"
        return last_line(path.read_text(errors="replace") if path.is_file() else "")

    def stop(self) -> None:
        """Close its stdin (it kills what it still runs and exits), then remove its folder."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.home, ignore_errors=True)


@dataclass
class ForkedChild:
    """A forked job, as ``sandbox.watch`` sees a process: its pid (its group's), and its exit."""

    server: ForkServer
    pid: int

    @property
    def orphaned(self) -> bool:
        """Killed because its server died, not for anything it did."""
        with self.server.changed:
            return self.pid in self.server.orphans

    def poll(self) -> int | None:
        with self.server.changed:
            return self.server.exits.get(self.pid)

    def wait(self) -> int:
        with self.server.changed:
            self.server.changed.wait_for(lambda: self.pid in self.server.exits)
            return self.server.exits.pop(self.pid)


class _Shared:
    """The grading process's one server, started when first needed and again after it dies."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.server: ForkServer | None = None
        self.cold_reason = ""  # set once the server could not start: every job runs cold

    def get(self) -> ForkServer | None:
        with self.lock:
            if self.cold_reason:
                return None
            if self.server is None or self.server.gone:
                if self.server is not None:
                    self.server.stop()
                try:
                    self.server = ForkServer.start()
                except ServerGone as err:
                    self.cold_reason = str(err)
                    log.warning(f"jaxcourse: {err}; each job starts a cold worker instead")
                    return None
                atexit.register(self.server.stop)
            return self.server


SHARED = _Shared()


def run_worker(job: WorkerJob, work: Path, name: str, deadline: Deadline) -> Outcome:
    """Run ``job`` (its file ``work/name.json``, its output in ``work/name.log``) in a worker of its
    own, killed when ``deadline`` passes."""
    path, log = work / f"{name}.json", work / f"{name}.log"
    write_atomic(path, json.dumps(job))
    for _ in range(2):  # a server that died before or under this job is started again, once
        server = SHARED.get()
        if server is None:
            break
        try:
            child = server.fork(path, work, log)
        except ServerGone:
            continue
        outcome = watch(child, log, deadline)
        if not child.orphaned:
            return outcome
        if deadline.progress is not None:
            deadline.progress.unlink(missing_ok=True)  # the job starts over: its progress too
    argv = [sys.executable, "-m", WORKER, str(path)]
    return run_process(argv, work, trusted_env(work), log, deadline)


def _read_line(stream: IO[bytes], timeout: float) -> dict[str, int] | None:
    """The first line the server writes, as JSON, or None if it writes none in ``timeout``."""
    found: list[dict[str, int]] = []

    def read() -> None:
        line = stream.readline()
        if line:
            try:
                found.append(json.loads(line))
            except ValueError:
                pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return found[0] if found else None
