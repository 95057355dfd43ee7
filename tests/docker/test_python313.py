"""The course on Python 3.13, built as a student on Debian 13 builds it: ``make venv`` from the
universal hashed locks, in a container of Debian 13's own Python (``build-offline-base.sh
--suite trixie``, like the offline base) with no network and the locks' wheels for 3.13 beside
it (``docker/wheelhouse.sh``), then the fast suite there, each parametrized test on its first
parameters (``--first-parameters``): every test's code runs on 3.13, and the sweeps over
submissions, machines and malformed inputs, which exercise the same code with other data, run
once, on the host. CI's setup makes both; elsewhere the test skips, saying how to make them.

Inside, no test has CI=true: what needs a component the container lacks (Docker, Redis, the
hub's proxy) skips there and runs on the host, in this same suite."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from autograder.engine.containers import removed_after

from ..helpers.course import REPO
from ..helpers.engine import unavailable

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BASE = "jaxcourse/offline-base:trixie-py3.13"
WHEELS = Path("/var/cache/jaxcourse/wheels-py3.13")
BUILD_AND_TEST = (
    "set -e; cd /course; python3 --version; make venv; "
    ".venv/bin/python -m pytest -q -p no:cacheprovider -m 'not slow and not docker' --first-parameters"
)
TIMEOUT = 900  # seconds: about 40 s to build the venv and 2 min for the suite, on 2 cores


def checkout_tar() -> bytes:
    """The checkout as git sees it (tracked files and new ones it does not ignore), as ``/course``."""
    git = ["git", "ls-files", "-coz", "--exclude-standard"]
    listed = subprocess.run(git, cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in filter(None, listed):
            if (REPO / name).is_file():
                tar.add(REPO / name, arcname=f"course/{name}")
    return buffer.getvalue()


def test_the_course_builds_and_passes_its_fast_suite_on_debian_13s_python_3_13(client):
    import docker.errors

    try:
        client.images.get(BASE)
    except docker.errors.ImageNotFound:
        unavailable(BASE, "build it with `sudo docker/build-offline-base.sh --suite trixie`")
    if not any(WHEELS.glob(".locks-*")):
        unavailable(f"the wheels for Python 3.13 in {WHEELS}", "download them with `sudo docker/wheelhouse.sh`")
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/wheels", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    wheels = {str(WHEELS): {"bind": "/wheels", "mode": "ro"}}
    command = ["sh", "-c", BUILD_AND_TEST]
    container = client.containers.create(BASE, command, network_disabled=True, environment=offline, volumes=wheels)
    with removed_after(container):
        container.put_archive("/", checkout_tar())
        container.start()
        status = container.wait(timeout=TIMEOUT)["StatusCode"]
        log = container.logs().decode(errors="replace")
    tail = log[-3000:]
    assert status == 0, f"make venv or the suite failed on Python 3.13:\n{tail}"
    assert re.search(r"^Python 3\.13\.\d+$", log, re.M), tail
    summary = log.strip().splitlines()[-1]
    assert re.search(r"\b\d{3,} passed\b", summary) and "failed" not in summary and "error" not in summary, tail
    skipped = [line for line in log.splitlines() if line.startswith("SKIPPED")]
    print(f"\nPython 3.13 in {BASE}: {summary}", *skipped, sep="\n  ")
