"""Fixtures for the image tests: one running lab per session, on the root conftest's engine
(``client``) and cpu image (``cpu_image``), which the sandbox tests share.

Under CI=true a missing engine or browser is a failure: CI must prove that the images build and
serve. Elsewhere (a laptop without Docker) the tests skip, with the reason in the summary.

The image is built from the checkout, with assignments released from the current sources into
a private copy (the root conftest's ``course`` fixture), so the repository is never written to.
Every container a fixture starts is removed, pass or fail.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.delivery import lab
from autograder.grading import images

from ..conftest import REPO, unavailable  # noqa: F401  (REPO: the image tests import it from here)


def jovyan_dir(path: Path) -> Path:
    """A host directory the image's jovyan (uid 1000) may write, as `jaxcourse lab` arranges."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(path, *lab.JOVYAN)
    return path


@contextmanager
def running(client, **options) -> Iterator:
    """A detached container that is removed however the test ends."""
    container = client.containers.run(detach=True, **options)
    try:
        yield container
    finally:
        container.remove(force=True)


def run_once(client, image: str, command: list[str], **options) -> tuple[int, str]:
    """Run ``command`` through the image's entrypoint; exit status and output (stdout + stderr)."""
    with running(client, image=image, command=command, **options) as container:
        status = container.wait(timeout=600)["StatusCode"]
        return status, container.logs().decode(errors="replace")


@dataclass(frozen=True)
class Lab:
    container: object
    url: str
    token: str
    work: Path
    healthy_s: float

    def get(self, endpoint: str, token: bool = True, **params: str):
        import requests

        headers = {"Authorization": f"token {self.token}"} if token else {}
        return requests.get(f"{self.url}{endpoint}", headers=headers, params=params, timeout=60)

    def post(self, endpoint: str, **data: str):
        import requests

        return requests.post(f"{self.url}{endpoint}", headers={"Authorization": f"token {self.token}"},
                             data=data, timeout=300)  # fmt: skip

    def exec(self, *argv: str, user: str = "") -> tuple[int, str]:
        code, out = self.container.exec_run(list(argv), user=user)
        return code, out.decode(errors="replace")


@pytest.fixture(scope="session")
def lab_container(client, cpu_image, tmp_path_factory) -> Iterator[Lab]:
    """The cpu image serving JupyterLab on a free 127.0.0.1 port, with a host work directory."""
    work = jovyan_dir(tmp_path_factory.mktemp("lab-work"))
    token = "test-" + os.urandom(12).hex()
    options = dict(image=cpu_image, environment={"JUPYTER_TOKEN": token}, user="1000:100",
                   ports={"8888/tcp": ("127.0.0.1", None)},
                   volumes={str(work): {"bind": lab.WORK_IN_CONTAINER, "mode": "rw"}})  # fmt: skip
    with running(client, **options) as container:
        healthy_s = lab.wait_healthy(container)
        container.reload()
        port = container.attrs["NetworkSettings"]["Ports"]["8888/tcp"][0]["HostPort"]
        yield Lab(container, f"http://127.0.0.1:{port}", token, work, healthy_s)


def wait_for_log(container, text: str, timeout: float = 60.0) -> str:
    """The container's log once it holds ``text``; the log tail in the failure otherwise."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        log = container.logs().decode(errors="replace")
        if text in log:
            return log
        time.sleep(0.5)
    raise AssertionError(f"{text!r} not in the container log after {timeout:.0f} s; its tail:\n{log[-1500:]}")


def chromium_or_skip() -> str:
    from .browser import chromium_path

    path = chromium_path()
    if path is None:
        unavailable("headless chromium", "not installed (apt-get install chromium)")
    return path


def released_notebooks(sources: images.Sources) -> list[Path]:
    return sorted(sources.release.rglob("*.ipynb"))
