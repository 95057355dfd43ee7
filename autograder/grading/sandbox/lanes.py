"""Lanes: the docker sandbox's containers that each run many submissions, one at a time, so that a
class pays for a container's start and its JAX once per lane, not once per notebook.

A lane is a folder (``job/`` and ``out/``, mounted at ``/job`` and ``/out``) and a container whose
server (``untrusted/lane.py``) forks a child for each submission, as a user of its own that nothing
outlives; it is driven over the container's attached stdin and stdout. A submission's workspace
holds links to its lane's two folders, so the grader's own folders beside them (the sealed
results, the artifacts) are never mounted. Between two submissions the server removes every file
a child could write and the grader checks that both folders are empty; a lane that cannot say so,
or whose server is gone, is removed, and its next submission runs in a fresh container.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import JaxcourseError
from ...engine.containers import remove
from .forked import CPU
from .sandbox import CompileCache, Outcome, exit_reason, last_line, runner_args

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container

# What the lane's server keeps of root's powers: change user, kill a child's leftovers, remove
# what a child wrote, whatever its modes. Its children keep none of them.
CAPABILITIES = ["SETUID", "SETGID", "KILL", "DAC_OVERRIDE", "FOWNER"]
START_TIMEOUT = 60.0  # seconds a lane may take to import JAX and say it is ready
ANSWER_TIMEOUT = 30.0  # seconds for the server to fork a job or clear a lane
KILL_TIMEOUT = 10.0  # seconds for it to end a job the grader stopped, before the lane is removed
POLL = 0.25  # seconds between the grader's looks at a running job


class LaneGone(JaxcourseError):
    """The lane's server stopped, or never started; raised by ``Lane.run`` only where the job
    itself never started, so that it may run elsewhere."""


class SandboxLost(JaxcourseError):
    """A lane ended under its job for a cause outside the job (its engine gone, its container
    killed or removed from outside): no grade is given, so that the job is graded again."""


class Lane:
    """One started lane: requests out on its container's stdin, events back on its stdout, read
    by a thread, one dict per tag."""

    def __init__(self, folder: Path, container: Container, stream: Any, cache: CompileCache | None) -> None:
        self.folder, self.container, self.stream, self.cache = folder, container, stream, cache
        self.events: dict[int, dict[str, Any]] = {}
        self.changed = threading.Condition()
        self.ready = self.gone = False
        self.tags = 0
        threading.Thread(target=self._read, daemon=True).start()

    @property
    def job(self) -> Path:
        return self.folder / "job"

    @property
    def out(self) -> Path:
        return self.folder / "out"

    @classmethod
    def start(cls, client: DockerClient, folder: Path, cache: CompileCache | None, settings: dict[str, Any]) -> Lane:
        """A lane on ``folder`` (its ``job`` and ``out`` made and mounted by ``settings``), its
        server ready; ``LaneGone`` with the server's last words if it is not in time."""
        container = client.containers.create(stdin_open=True, **settings)
        try:
            stream = container.attach_socket(params={"stdin": 1, "stdout": 1, "stream": 1})
            container.start()
        except BaseException:
            remove(container)
            raise
        lane = cls(folder, container, stream, cache)
        with lane.changed:
            lane.changed.wait_for(lambda: lane.ready or lane.gone, START_TIMEOUT)
        if not lane.ready:
            said = last_line(container.logs(stderr=True, stdout=False, tail=20).decode("utf-8", "replace"))
            lane.close()
            raise LaneGone(f"the lane did not start: {said}")
        return lane

    def _read(self) -> None:
        """Each event as it comes, until the stream ends: the server is gone."""
        from docker.utils.socket import frames_iter

        pending = b""
        try:
            for _, data in frames_iter(self.stream, tty=False):  # stdout only is attached
                pending += data
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    event = json.loads(line)
                    with self.changed:
                        if "ready" in event:
                            self.ready = True
                        else:
                            self.events.setdefault(event["tag"], {}).update(event)
                        self.changed.notify_all()
        except (OSError, ValueError, KeyError, TypeError):
            pass
        with self.changed:
            self.gone = True
            self.changed.notify_all()

    def _ask(self, request: dict[str, Any]) -> None:
        if self.gone:
            raise LaneGone("the lane's server is gone")
        try:
            self.stream._sock.sendall((json.dumps(request) + "\n").encode())
        except OSError:
            with self.changed:
                self.gone = True
            raise LaneGone("the lane's server is gone") from None

    def _answer(self, tag: int, key: str, timeout: float) -> dict[str, Any] | None:
        """The events of ``tag`` once one holds ``key``; None if the server is gone first, or
        says nothing in ``timeout``."""
        with self.changed:
            self.changed.wait_for(lambda: key in self.events.get(tag, {}) or self.gone, timeout)
            event = self.events.get(tag, {})
            return event if key in event else None

    def _next_tag(self) -> int:
        self.tags += 1
        return self.tags

    def run(self, timeout: float, memory: str, overfilled: Callable[[Path], str]) -> Outcome:
        """The job in the lane's folders, run in a child of its server; killed past ``timeout``
        or when it writes too much (``overfilled`` says why). ``LaneGone`` where the server never
        started it (gone before, or silent): the job ran nowhere and may run elsewhere."""
        tag, started_at, begin = self._next_tag(), time.time(), time.perf_counter()
        self._ask({"run": tag, "argv": runner_args("/job", "/out"), "timeout": timeout})
        if self._answer(tag, "pid", ANSWER_TIMEOUT) is None:
            with self.changed:
                self.gone = True  # so that it serves no other job
            raise LaneGone("the lane's server did not start the job")
        deadline, stopped, killed_at = time.monotonic() + timeout, ("", ""), 0.0
        while (ended := self._answer(tag, "status", POLL)) is None:
            if killed_at and time.monotonic() - killed_at > KILL_TIMEOUT:
                with self.changed:  # its server could not end it (a fork bomb at the memory limit)
                    self.gone = True  # so the lane is removed, the job with it
            if self.gone:
                said = {"lane run": time.perf_counter() - begin}
                return Outcome(stopped[0], None, "", stopped[1], started_at, said) if killed_at else self._ended(memory)
            if not killed_at:
                reason = overfilled(self.out)
                stopped = (
                    ("timeout", "") if time.monotonic() > deadline else ("invalid", reason) if reason else ("", "")
                )
                if stopped[0]:
                    killed_at = time.monotonic()
                    self._ask({"kill": tag})
        phases = {"lane run": time.perf_counter() - begin, CPU: ended["cpu"]}
        code, tail = ended["status"], ended["tail"]
        if stopped[0]:
            return Outcome(stopped[0], None, tail, stopped[1], started_at, phases)
        if ended["oom"] and code != 0:
            return Outcome("crashed", code, tail, f"ran out of memory (the limit is {memory})", started_at, phases)
        return Outcome("ok" if code == 0 else "crashed", code, tail, exit_reason(code), started_at, phases)

    def _ended(self, memory: str) -> Outcome:
        """The server gone mid-job, asked of its engine: only the job's memory (the container's
        limit) or its processes that would not die end a server, and the lane ran no one else's.
        An engine that does not answer, or a container removed or SIGKILLed from outside (no
        process of a job may signal its root's server), is ``SandboxLost``."""
        import docker.errors

        try:
            code = self.container.wait(timeout=KILL_TIMEOUT)["StatusCode"]
            self.container.reload()
        except docker.errors.NotFound:
            raise SandboxLost("the lane's container was removed under its job") from None
        except engine_errors() as err:
            raise SandboxLost(
                f"the Docker engine did not answer for the lane's container: {type(err).__name__}"
            ) from None
        if self.container.attrs["State"].get("OOMKilled"):
            return Outcome("crashed", None, "", f"ran out of memory (the limit is {memory})")
        if code == 128 + signal.SIGKILL:
            raise SandboxLost("the lane's container was killed from outside its job")
        return Outcome("crashed", None, "", "stopped with its sandbox's container")

    def clear(self) -> bool:
        """Everything the last job could write removed, and both folders empty: the lane may
        serve another submission."""
        tag = self._next_tag()
        try:
            self._ask({"clear": tag})
        except LaneGone:
            return False
        answer = self._answer(tag, "cleared", ANSWER_TIMEOUT)
        if answer is None or not answer["cleared"]:
            return False
        for path in self.job.iterdir():  # the grader's own files: the job and its plans
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        return not any(self.out.iterdir()) and not any(self.job.iterdir())

    def close(self) -> None:
        """Stdin closed (the server kills its child and exits), the container removed."""
        try:
            self.stream._sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        try:
            remove(self.container)
        finally:
            self.stream.close()


def engine_errors() -> tuple[type[Exception], ...]:
    """What docker-py raises where its engine does not answer: requests' own errors, unwrapped
    (refused, reset, timed out), and its own."""
    import docker.errors
    import requests.exceptions

    return (requests.exceptions.RequestException, docker.errors.DockerException)


class LanePool:
    """Keeps ``size`` lanes started: ``take`` hands a free one out (or None), ``give_back``
    clears it and keeps it for the next, and a lane that is gone or will not clear is replaced."""

    def __init__(self, size: int, start: Callable[[], Lane], discard: Callable[[Lane], None]) -> None:
        self.size, self._start, self._discard = size, start, discard
        self._free: list[Lane] = []
        self._count = 0  # lanes alive or starting
        self._starting: set[threading.Thread] = set()
        self._closed = False
        self._lock = threading.Lock()
        self.fill()

    def take(self) -> Lane | None:
        with self._lock:
            lane = self._free.pop(0) if self._free else None
        if lane is not None and lane.gone:  # its server left after IDLE seconds, or died
            self.drop(lane)
            return None
        self.fill()
        return lane

    def give_back(self, lane: Lane) -> None:
        if not self._closed and lane.clear():
            with self._lock:
                if not self._closed:
                    self._free.append(lane)
                    return
        self.drop(lane)

    def drop(self, lane: Lane) -> None:
        self._discard(lane)
        with self._lock:
            self._count -= 1
        self.fill()

    def fill(self) -> None:
        """Start lanes in the background until ``size`` are alive or starting."""
        with self._lock:
            wanted = 0 if self._closed else self.size - self._count
            self._count += max(0, wanted)
            for _ in range(wanted):  # started under the lock, so that ``close`` joins only started threads
                thread = threading.Thread(target=self._starting_one, daemon=True)
                self._starting.add(thread)
                thread.start()

    def _starting_one(self) -> None:
        try:
            self._add()
        finally:
            with self._lock:
                self._starting.discard(threading.current_thread())

    def _add(self) -> None:
        try:
            lane = self._start()
        except Exception:  # the engine refused one, or it did not start: its submissions run cold
            with self._lock:
                self._count -= 1
            return
        with self._lock:
            keep = not self._closed
            if keep:
                self._free.append(lane)
        if not keep:
            self._discard(lane)

    def close(self) -> None:
        """Remove every free lane, and every lane still starting once it has started (each start
        ends within ``START_TIMEOUT`` and the engine's own timeouts): a grading process that exits
        next leaves no container of its own behind. Those handed out are removed as they come back."""
        with self._lock:
            self._closed = True
            free, self._free = self._free, []
            starting = list(self._starting)
        for lane in free:
            self._discard(lane)
        for thread in starting:
            thread.join()


def lane_folder() -> Path:
    """A new lane's folder, with its ``job`` and ``out``."""
    folder = Path(tempfile.mkdtemp(prefix="jaxcourse-lane-"))
    (folder / "job").mkdir()
    (folder / "out").mkdir()
    return folder
