"""The test sessions share one Docker engine per machine: a second session waits for the first,
and what a killed session left running (its teardown never ran) is stopped by the next."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.engine.containers import remove
from autograder.engine.images import OFFLINE_BASE
from classroom.hub import deploy

from ..helpers.engine import LOCK, clear_dead_classes

pytestmark = pytest.mark.docker

# Another session's first step: take the lock without waiting; print who holds it if taken.
TRY_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print(open(sys.argv[1]).read())
"""


def test_a_second_session_finds_the_engine_taken(client):
    held = subprocess.run([sys.executable, "-c", TRY_LOCK, str(LOCK)], capture_output=True, text=True, timeout=30)
    assert held.returncode == 0, held.stderr
    assert held.stdout.strip() == f"pid {os.getpid()}", "this session should hold the engine's lock"


def _class_container(client, name: str, served) -> object:
    labels = {deploy.LABEL: f"jaxcourse-{name}", deploy.DIR_LABEL: str(served)}
    return client.containers.run(
        OFFLINE_BASE, ["sleep", "300"], name=f"jaxcourse-{name}-hub", labels=labels, detach=True, network_mode="none"
    )


def test_a_killed_sessions_class_is_stopped_and_this_sessions_kept(client, tmp_path_factory):
    mine = tmp_path_factory.getbasetemp()
    dead = _class_container(client, "zombie", mine.parent / "pytest-killed" / "zombie")
    alive = _class_container(client, "mine", mine / "mine")
    try:
        assert "jaxcourse-zombie" in clear_dead_classes(client, mine.parent, mine)
        assert not client.containers.list(all=True, filters={"id": dead.id})
        assert client.containers.list(filters={"id": alive.id}), "this session's class was stopped"
    finally:
        remove(alive)
        remove(dead)
