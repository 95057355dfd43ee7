"""Jobs run in children of a warm server (``core/forkserver.py``), driven from the grader: the
server is started when first needed and again after it dies, each job's child is watched as a
cold process would be (``sandbox.watch``), and a job whose child was killed because its server
died runs again, once, in a new server's child (the death was the server's, not the job's). A
server that cannot start (its imports started a thread) leaves its jobs to cold processes, said
once.
"""

from __future__ import annotations

import atexit
import json
import logging
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ...core.errors import JaxcourseError
from ...core.forkserver import ForkRequest
from .sandbox import Deadline, Outcome, kill_group, last_line, watch

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0  # seconds a server may take to import JAX and say it is ready
KILLED = -9  # the status of a child whose server died under it: its group is killed
CPU = "CPU"  # the phase, in an outcome's, that holds a forked job's CPU seconds


class ServerGone(JaxcourseError):
    """The warm server stopped, or never started; its log's last lines say why."""


@dataclass(frozen=True)
class ServerCommand:
    """How to start one kind of server: its command line and environment, and what it is
    called in a message."""

    argv: list[str]
    env: dict[str, str]
    what: str


@dataclass
class ForkServer:
    """One warm server: requests out on its stdin, events back on its stdout, read by a thread."""

    proc: subprocess.Popen[bytes]
    home: Path
    what: str
    # pid -> exit status, and the CPU seconds it used (none for one killed with its server)
    exits: dict[int, tuple[int, float | None]] = field(default_factory=dict)
    forked: dict[int, int] = field(default_factory=dict)  # tag -> pid
    live: set[int] = field(default_factory=set)
    orphans: set[int] = field(default_factory=set)  # children killed because the server died
    changed: threading.Condition = field(default_factory=threading.Condition)
    gone: bool = False
    tags: int = 0

    @classmethod
    def start(cls, command: ServerCommand) -> ForkServer:
        home = Path(tempfile.mkdtemp(prefix="jaxcourse-forkserver-"))
        with open(home / "server.log", "wb") as log:
            proc = subprocess.Popen(
                command.argv,
                cwd=home,
                env={**command.env, "HOME": str(home)},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        server = cls(proc, home, command.what)
        assert proc.stdout is not None
        ready = _read_line(proc.stdout, START_TIMEOUT)
        if ready is None or "ready" not in ready:
            said = server.log_tail()  # read before stop() removes its folder
            server.stop()
            raise ServerGone(f"{command.what} did not start: {said}")
        threading.Thread(target=server._read_events, daemon=True).start()
        return server

    def fork(self, argv: list[str], cwd: Path, log: Path) -> ForkedChild:
        """A child running the server's job on ``argv``; ``ServerGone`` if the server is."""
        with self.changed:
            if self.gone:
                raise ServerGone(f"{self.what} stopped: {self.log_tail()}")
            self.tags += 1
            tag = self.tags
            request: ForkRequest = {"tag": tag, "argv": argv, "cwd": str(cwd), "log": str(log)}
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
            except OSError:
                self.gone = True
                raise ServerGone(f"{self.what} stopped: {self.log_tail()}") from None
            self.changed.wait_for(lambda: tag in self.forked or self.gone)
            if tag not in self.forked:
                raise ServerGone(f"{self.what} stopped: {self.log_tail()}")
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
                        self.exits[event["pid"]] = (event["status"], event["cpu"])
                        self.live.discard(event["pid"])
                    self.changed.notify_all()
        except (ValueError, KeyError, TypeError):
            kill_group(self.proc.pid)
        with self.changed:  # the server died: its children are killed, and count as killed
            self.gone = True
            for pid in self.live:
                kill_group(pid)
                self.exits[pid] = (KILLED, None)
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
    cpu: float | None = None  # what it used, once waited for

    @property
    def orphaned(self) -> bool:
        """Killed because its server died, not for anything it did."""
        with self.server.changed:
            return self.pid in self.server.orphans

    def poll(self) -> int | None:
        with self.server.changed:
            ended = self.server.exits.get(self.pid)
            return ended[0] if ended else None

    def wait(self) -> int:
        with self.server.changed:
            self.server.changed.wait_for(lambda: self.pid in self.server.exits)
            status, self.cpu = self.server.exits.pop(self.pid)
            return status


class Shared:
    """A grading process's one server of a kind, started when first needed (``command`` says
    how) and again after it dies."""

    def __init__(self, command: Callable[[], ServerCommand]) -> None:
        self.command = command
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
                    self.server = ForkServer.start(self.command())
                except ServerGone as err:
                    self.cold_reason = str(err)
                    log.warning(f"jaxcourse: {err}; each job starts a cold process instead")
                    return None
                atexit.register(self.server.stop)
            return self.server

    def run(self, argv: list[str], cwd: Path, log: Path, deadline: Deadline) -> Outcome | None:
        """How the job on ``argv`` ended in a child of the server, watched under ``deadline``;
        None where no server serves it, for the caller to run it cold."""
        for _ in range(2):  # a server that died before or under this job is started again, once
            server = self.get()
            if server is None:
                return None
            try:
                child = server.fork(argv, cwd, log)
            except ServerGone:
                continue
            outcome = watch(child, log, deadline)
            if child.cpu is not None:
                outcome.phases[CPU] = child.cpu
            if not child.orphaned:
                return outcome
            if deadline.progress is not None:
                deadline.progress.unlink(missing_ok=True)  # the job starts over: its progress too
        return None


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
