"""The Python 3.13 suite's container (``tests/docker/test_python313.py``): the checkout in Debian
13's own Python, ``make venv`` offline from the locks' wheels, then the fast suite. It starts with
the session (``tests/helpers/background.py``) and its test reads the result."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from . import background
from .course import REPO

BASE = "jaxcourse/offline-base:trixie-py3.13"
WHEELS = Path("/var/cache/jaxcourse/wheels-py3.13")
BUILD_AND_TEST = (
    "set -e; cd /course; python3 --version; make venv; "
    ".venv/bin/python -m pytest -q -p no:cacheprovider -m 'not slow and not docker' --first-parameters"
)
TEST = "tests/docker/test_python313.py::test_the_course_builds_and_passes_its_fast_suite_on_debian_13s_python_3_13"


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


def missing(client) -> tuple[str, str] | None:
    """What the run needs and CI's setup makes, as (what, how to make it), where it is absent."""
    import docker.errors

    try:
        client.images.get(BASE)
    except docker.errors.ImageNotFound:
        return BASE, "build it with `sudo docker/build-offline-base.sh --suite trixie`"
    if not any(WHEELS.glob(".locks-*")):
        return f"the wheels for Python 3.13 in {WHEELS}", "download them with `sudo docker/wheelhouse.sh`"
    return None


def start(client):
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/wheels", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return background.start(
        client,
        BASE,
        ["sh", "-c", BUILD_AND_TEST],
        files=checkout_tar(),
        network_disabled=True,
        environment=offline,
        volumes={str(WHEELS): {"bind": "/wheels", "mode": "ro"}},
    )
