"""What the Docker tests need from the machine (under CI=true its absence is a failure), and the\nengine to themselves."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from autograder.core.course import Course
from classroom.classdir import ClassDir
from classroom.hub import deploy, teardown

if TYPE_CHECKING:
    from docker.client import DockerClient

IN_CI = os.environ.get("CI") == "true"


def unavailable(what: str, reason: str) -> None:
    """Fail under CI; elsewhere skip, loudly (a warning and the skip reason in the summary)."""
    if IN_CI:
        pytest.fail(f"CI=true requires {what}: {reason}", pytrace=False)
    warnings.warn(f"tests skipped: {what} unavailable: {reason}", stacklevel=2)
    pytest.skip(f"{what} unavailable: {reason}")


LOCK = Path(tempfile.gettempdir()) / "jaxcourse-docker-tests.lock"


@contextlib.contextmanager
def engine_lock(path: Path = LOCK, what: str = "the Docker engine") -> Iterator[None]:
    """One test session at a time on this machine's Docker engine: the tests count its sandboxes
    and name its classes, so a second session waits here (saying so) rather than failing there."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another"
            print(f"\nwaiting for test session {holder} to finish with {what} ({path})", file=sys.stderr)
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock, as a killed session's exit does


def clear_dead_classes(client: DockerClient, temp_root: Path, mine: Path) -> list[str]:
    """Stop the classes a killed test session left running (their teardown never ran): any class
    serving a directory under pytest's temporary root but outside this session's. Called under
    ``engine_lock``, so no live session owns them."""
    stale: dict[str, Path] = {}
    for container in client.containers.list(all=True, filters={"label": deploy.DIR_LABEL}):
        served = Path(container.labels[deploy.DIR_LABEL])
        if served.is_relative_to(temp_root) and not served.is_relative_to(mine):
            stale[container.labels.get(deploy.LABEL, "")] = served
    for served in stale.values():
        teardown.down(deploy.Deployment(ClassDir(served), Course(served)))
    return sorted(stale)


@contextlib.contextmanager
def a_port_held(client: DockerClient, image: str) -> Iterator[int]:
    """A loopback port another container publishes while the block runs: what a start that asks
    for it must fail on, as it would beside another class's hub or another student's lab."""
    from autograder.engine.containers import host_port, running

    options = {"entrypoint": ["sleep", "300"], "command": [], "network_mode": "bridge"}
    with running(client, image=image, ports={"9/tcp": ("127.0.0.1", None)}, **options) as holder:
        yield host_port(holder, "9/tcp")
