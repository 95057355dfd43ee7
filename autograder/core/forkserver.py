"""A warm server: a process that imports JAX and what one side's jobs import once, then forks a
fresh child for each job, so that no job pays for the imports and none shares a process with
another. Nothing runs in the server but the imports and the forks: a job that hangs, crashes or
corrupts its process ends with its child.

Each side has its own: the trusted worker's (``trusted/forkserver.py``) and the local sandbox's
runner's (``untrusted/forkserver.py``); ``grading/sandbox/forked.py`` drives either. A docker
sandbox's lane (``untrusted/lane.py``) forks with the same parts (``redirect``, ``run_entry``,
``end``) and more care.

One JSON line per request on stdin (``ForkRequest``), one JSON line per event on stdout
(``Forked`` when a child starts, ``Exited`` when it ends, with its exit status as ``subprocess``
writes it, negative for a signal, and the CPU seconds it used: a profile's only measure of what
one job cost while others run beside it). The backends are never started here: XLA's threads do not
survive a fork, so each child starts its own, with its own device count.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import sys
import traceback
from collections.abc import Sequence
from typing import TextIO, TypedDict

from .errors import JaxcourseError

POLL = 0.05  # seconds between looks for ended children while no request comes


class ForkRequest(TypedDict):
    """Run the job's ``main(argv)`` in a fresh child, in ``cwd`` (its ``HOME`` too), its output
    into ``log``."""

    tag: int
    argv: list[str]
    cwd: str
    log: str


class Forked(TypedDict):
    tag: int
    pid: int


class Exited(TypedDict):
    pid: int
    status: int  # as subprocess writes it: negative for the signal that ended it
    cpu: float  # user and system seconds of the child and of every process it waited for


class NotForkSafe(JaxcourseError):
    """A thread was started by the imports; forking would copy a process in the middle of it."""


def warm_up(modules: Sequence[str], what: str, optional: Sequence[str] = ()) -> None:
    """``modules`` imported, and those of ``optional`` that are installed, with no thread but this
    one (OpenBLAS's pool is kept off by the caller's ``OPENBLAS_NUM_THREADS=1``)."""
    for module in modules:
        importlib.import_module(module)
    for module in optional:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads != 1:
        raise NotForkSafe(f"{what} has {threads} threads after its imports; it forks with one")


def child(request: ForkRequest, entry: str) -> None:
    """In the fork: a session of its own (killed as a group), the job's folder, its log in place
    of the server's pipes, then ``entry``'s ``main`` as a cold ``python -m entry ARGV`` would
    run it; never returns."""
    code = 1
    try:
        os.setsid()
        redirect(os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        os.chdir(request["cwd"])
        os.environ["HOME"] = request["cwd"]
        code = run_entry(entry, request["argv"])
    except BaseException:
        traceback.print_exc()
    finally:
        end(code)


def redirect(output: int) -> None:
    """stdin from /dev/null, stdout and stderr into ``output`` (closed here), in place of the
    server's pipes; buffered as a cold process's are when written to a file: stdout by blocks,
    stderr by lines, so a job that dies mid-way leaves the same last output either way."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    os.close(null)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115  (the process's own descriptors)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115


def run_entry(entry: str, argv: list[str]) -> int:
    """``entry``'s ``main(argv)``, its ``sys.argv`` what a cold ``python -m entry ARGV`` has."""
    module = importlib.import_module(entry)
    sys.argv = [str(module.__file__), *argv]
    code: int = module.main(argv)
    return code


def end(code: int) -> None:
    """A child's end: what it wrote flushed, then out without running the server's exit handlers."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve(requests: int, events: TextIO, entry: str) -> None:
    """Fork a child per request line read from the descriptor ``requests`` until it closes, and
    say when each child ends. Lines are split here, not by a buffered reader: ``select`` sees
    only what no buffer has taken yet."""
    children: set[int] = set()
    pending = b""
    open_ = True

    def emit(event: Forked | Exited) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()

    while open_ or children:
        ready, _, _ = select.select([requests] if open_ else [], [], [], POLL)
        if ready:
            data = os.read(requests, 65536)
            open_ = bool(data)
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request: ForkRequest = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    child(request, entry)
                children.add(pid)
                emit({"tag": request["tag"], "pid": pid})
        for pid in list(children):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                cpu = round(usage.ru_utime + usage.ru_stime, 3)
                emit({"pid": pid, "status": os.waitstatus_to_exitcode(status), "cpu": cpu})
        if not open_:
            for pid in children:  # the grader is gone: so are its jobs
                _kill_group(pid)


def _kill_group(pid: int) -> None:
    """SIGKILL the child's group; the child alone if it was stopped before it made its group."""
    try:
        os.killpg(pid, 9)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def run(modules: Sequence[str], entry: str, what: str, optional: Sequence[str] = ()) -> int:
    """Import ``modules``, ``entry`` and what of ``optional`` is installed, say ready, then serve
    until stdin closes."""
    warm_up([*modules, entry], what, optional)
    sys.stdout.write(json.dumps({"ready": os.getpid()}) + "\n")
    sys.stdout.flush()
    serve(sys.stdin.fileno(), sys.stdout, entry)
    return 0
