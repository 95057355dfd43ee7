"""`jaxcourse lab` as a test starts it: a process whose printed URL and token are read, stopped with
Ctrl-C as a terminal stops it; and a course tree for it to serve, with only the records the
checks of one assignment need."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from .course import REPO

JAXCOURSE = [sys.executable, "-m", "jaxcourse"]
URL_RE = re.compile(r"(http://127\.0\.0\.1:\d+)/lab\?token=([0-9a-f]+)")


def _as_from_a_terminal() -> None:
    """Ctrl-C's default action, as a command typed at a terminal has it: a test session started in
    the background (`make test &`, some CI runners) ignores SIGINT, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """``jaxcourse ARGV`` from the checkout, its output (stdout and stderr) on a pipe."""
    return subprocess.Popen(
        [*JAXCOURSE, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        env=os.environ | (env or {}),
        preexec_fn=_as_from_a_terminal,
    )


def read_until_url(proc: subprocess.Popen, timeout: float = 300) -> tuple[str, str, list[str]]:
    """The base URL and token `jaxcourse lab` prints, and the lines before it."""
    lines: list[str] = []
    start_time = time.monotonic()
    while time.monotonic() - start_time < timeout:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        lines.append(line.rstrip())
        if match := URL_RE.search(line):
            return match.group(1), match.group(2), lines
    proc.kill()
    raise AssertionError("jaxcourse lab printed no URL:\n" + "\n".join(lines[-20:]))


def stop(proc: subprocess.Popen) -> tuple[int, str]:
    """Ctrl-C, as a terminal sends it; the exit status and the rest of the output."""
    proc.send_signal(signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("jaxcourse lab did not stop within 60 s of Ctrl-C") from None
    return proc.returncode, rest


def checkout_with_records(root: Path, assignment: str) -> Path:
    """A checkout for `jaxcourse lab` to serve (``JAXCOURSE_ROOT``): the repo's docker/ and course/,
    and ``assignments/expected/`` holding ``assignment``'s records alone, made by
    ``expected.ship`` from a private copy of the solutions (seconds, where releasing every
    assignment takes minutes). No release: the work folder gets the lectures only."""
    import shutil

    from autograder.core.course import Course
    from autograder.grading.pipeline import expected
    from autograder.specs import get

    instructor = root / "instructor"
    shutil.copytree(REPO / "solutions", instructor / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    (instructor / "assignments").mkdir()
    shutil.copy(REPO / "assignments" / "nbgrader_config.py", instructor / "assignments")
    checkout = root / "checkout"
    (checkout / "assignments").mkdir(parents=True)
    (checkout / "docker").symlink_to(REPO / "docker")
    (checkout / "course").symlink_to(REPO / "course")
    expected.ship(Course(instructor), get(assignment), checkout / "assignments" / "expected")
    return checkout
