"""A lane: one sandbox container that runs many submissions, one at a time, each in a child forked
from this server, which imported JAX once, and each as a user of its own that nothing outlives.

    python -m autograder.untrusted.lane      (as root in its container: grading/sandbox/lanes.py)

The server is root in the container, with only the capabilities it needs to change user, to kill
and to remove what a child left (``lanes.CAPABILITIES``). A child gives them all up before it
reads its job: it becomes uid ``UID_BASE + tag``, a uid no process had before it in this
container, with no groups, the kernel's first choice when memory runs out, and a home of its own.
It cannot signal, trace or read the server (another user's process) and gains nothing by
``exec`` (no new privileges). When it ends, every process that is not root's is killed before its
end is said, so nothing of it is left to touch the results the grader then reads, or the next
submission; on ``clear`` every file it could write (``/out``, ``/tmp``, ``/dev/shm``, the homes)
is removed.

One JSON line per request on stdin, one per event on stdout (the grader's attached stream):

    {"run": TAG, "argv": [...], "timeout": S}   ->  {"tag": TAG, "pid": PID}, and when it ends
                                                    {"tag": TAG, "status": N, "cpu": S, "oom": B, "tail": T}
    {"kill": TAG}                               ->  (its end, as above)
    {"clear": TAG}                              ->  {"tag": TAG, "cleared": B}

``status`` is as ``subprocess`` writes it; ``oom``: the container's memory limit killed something
while it ran; ``tail``: the last of what it wrote (its stdout and stderr, read through a pipe, so
that no amount of output fills a disk). The server exits when stdin closes (the grader is gone:
its child is killed first), after ``IDLE`` seconds without a request, or when a child's processes
will not die (the grader then runs that job in a fresh container).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..core import forkserver
from ..core.quick_compile import runner_flags
from .runner import WARM_IF_INSTALLED, WARM_IMPORTS

ENTRY = "autograder.untrusted.runner"
UID_BASE = 200_000  # a child's uid is this plus its tag: neither the image's user nor root
HOMES = "/home/lanes"  # a tmpfs, sticky and open to all: each child makes its own home in it
SCRATCH = ("/out", "/tmp", "/dev/shm", HOMES)  # all a child can write: emptied on ``clear``
GRACE = 5.0  # seconds past its timeout before the server kills a child the grader has not
IDLE = 600.0  # seconds without a request before the server exits, and its container with it
TAIL_BYTES = 2000  # of a child's output, kept for its end's event
POLL = 0.05  # seconds between looks for a child's end
SWEEP_SECONDS = 5.0  # how long the server tries to kill a child's processes before it gives up
OOM_COUNTERS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")


class Unkillable(Exception):
    """A child's processes outlived ``SWEEP_SECONDS`` of SIGKILLs: the lane cannot be trusted."""


@dataclass
class Child:
    tag: int
    pid: int
    output: int | None  # the read end of its output's pipe, until it closes
    deadline: float
    oom_before: int
    tail: bytearray = field(default_factory=bytearray)

    def read(self) -> None:
        """What the child wrote since the last look (its last ``TAIL_BYTES`` kept)."""
        assert self.output is not None
        data = os.read(self.output, 65536)
        if not data:
            os.close(self.output)
            self.output = None
        self.tail = (self.tail + data)[-TAIL_BYTES:]


def start(tag: int, argv: list[str], timeout: float) -> Child:
    """A child for the job, forked with its output on a pipe of its own."""
    oom_before = oom_kills()
    output, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(output)
        _child(tag, argv, write_end)
    os.close(write_end)
    return Child(tag, pid, output, time.monotonic() + timeout + GRACE, oom_before)


def _child(tag: int, argv: list[str], output: int) -> None:
    """In the fork, in this order: a session of its own, the kernel's first choice when memory
    runs out, its output on the pipe, no descriptor of the server's, then a user of its own with
    no groups and so no capability, its own home, and the runner; never returns."""
    code = 1
    try:
        os.setsid()
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
        forkserver.redirect(output)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        uid = UID_BASE + tag
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        home = f"{HOMES}/{uid}"
        os.mkdir(home, 0o700)
        os.chdir(home)
        os.environ["HOME"] = home
        code = forkserver.run_entry(ENTRY, argv)
    except BaseException:
        traceback.print_exc()
    finally:
        forkserver.end(code)


def oom_kills() -> int:
    """How many processes the container's memory limit has killed so far (0 where unknown)."""
    for path in OOM_COUNTERS:
        try:
            with open(path) as counters:
                for line in counters:
                    name, _, value = line.partition(" ")
                    if name == "oom_kill":
                        return int(value)
        except OSError:
            continue
    return 0


def others() -> list[int]:
    """Every live process in the container that is not root's: what children left."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid == 0:
                continue
            with open(f"/proc/{name}/stat") as stat:
                state = stat.read().rpartition(")")[2].split()[0]
        except OSError:
            continue  # gone while we looked
        if state not in ("Z", "X"):  # a zombie runs nothing; its parent or init reaps it
            found.append(int(name))
    return found


def sweep() -> None:
    """SIGKILL every process that is not root's until none is left: a process dying of SIGKILL
    forks no more, so each round leaves only what was forked before it began."""
    give_up = time.monotonic() + SWEEP_SECONDS
    while True:
        found = others()
        if not found:
            return
        if time.monotonic() > give_up:
            raise Unkillable(f"{len(found)} processes of a finished job would not die")
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def wipe() -> bool:
    """Remove everything in the folders a child can write; whether they are empty now."""
    for folder in SCRATCH:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
    return not any(os.listdir(folder) for folder in SCRATCH if os.path.isdir(folder))


def finish(child: Child, status: int, cpu: float) -> dict[str, Any]:
    """The event of a child's end, said only once nothing of it runs any more."""
    sweep()
    while child.output is not None:  # every writer is dead: the pipe ends
        child.read()
    tail = child.tail.decode("utf-8", "replace")
    return {"tag": child.tag, "status": status, "cpu": cpu, "oom": oom_kills() > child.oom_before, "tail": tail}


def serve(requests: int, events: TextIO) -> None:
    """One child at a time, for each ``run`` read from the descriptor ``requests``, until it closes."""
    child: Child | None = None
    pending, open_, quiet_since = b"", True, time.monotonic()

    def emit(event: dict[str, Any]) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()

    while open_ or child is not None:
        watched = ([requests] if open_ else []) + ([child.output] if child and child.output is not None else [])
        ready, _, _ = select.select(watched, [], [], POLL)
        if child is not None and child.output in ready:
            child.read()
        if requests in ready:
            data = os.read(requests, 65536)
            open_, quiet_since = bool(data), time.monotonic()
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request = json.loads(line)
                if "run" in request:
                    if child is not None:
                        raise RuntimeError("a job was sent while another runs")
                    child = start(request["run"], request["argv"], request["timeout"])
                    emit({"tag": child.tag, "pid": child.pid})
                elif "kill" in request and child is not None and child.tag == request["kill"]:
                    _kill_group(child.pid)
                elif "clear" in request:
                    if child is not None:
                        raise RuntimeError("a clear was sent while a job runs")
                    emit({"tag": request["clear"], "cleared": wipe()})
        if child is not None:
            if not open_ or time.monotonic() > child.deadline:
                _kill_group(child.pid)
            done, status, usage = os.wait4(child.pid, os.WNOHANG)
            if done:
                cpu = round(usage.ru_utime + usage.ru_stime, 3)
                emit(finish(child, os.waitstatus_to_exitcode(status), cpu))
                child, quiet_since = None, time.monotonic()
        elif time.monotonic() - quiet_since > IDLE:
            return


def _kill_group(pid: int) -> None:
    """SIGKILL the child's group; ``finish`` kills whatever left it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main() -> int:
    os.environ["XLA_FLAGS"] = runner_flags()  # as the runner sets them, before its JAX is imported
    forkserver.warm_up([*WARM_IMPORTS, ENTRY], "the lane", WARM_IF_INSTALLED)
    sys.stdout.write(json.dumps({"ready": os.getpid()}) + "\n")
    sys.stdout.flush()
    serve(sys.stdin.fileno(), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
