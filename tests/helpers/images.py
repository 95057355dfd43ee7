"""Running the course's images in the image tests: one-off commands, a lab's log, a browser."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.delivery import lab
from autograder.engine import images
from autograder.engine.containers import running

from .engine import unavailable


def jovyan_dir(path: Path) -> Path:
    """A host directory the image's jovyan (uid 1000) may write, as `jaxcourse lab` arranges."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(path, *lab.JOVYAN)
    return path


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

    def get(self, endpoint: str, token: bool = True, **params: str):
        import requests

        headers = {"Authorization": f"token {self.token}"} if token else {}
        return requests.get(f"{self.url}{endpoint}", headers=headers, params=params, timeout=60)

    def post(self, endpoint: str, **data: str):
        import requests

        return requests.post(
            f"{self.url}{endpoint}", headers={"Authorization": f"token {self.token}"}, data=data, timeout=300
        )

    def exec(self, *argv: str, user: str = "") -> tuple[int, str]:
        code, out = self.container.exec_run(list(argv), user=user)
        return code, out.decode(errors="replace")


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
