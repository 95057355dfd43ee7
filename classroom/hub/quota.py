"""Each user's work folder is held to the class's quota (``[hub] work_quota``).

The engine here cannot limit a bind-mounted folder, and a server's own root is read-only (its
home and /tmp are size-limited memory), so the work folder is the one place a server can fill the
host's disk. A service of the hub measures every folder every ``[hub] quota_every`` seconds and
stops the server of one over its quota, with a note in the folder saying why; the hub will not
start that server again until the folder is back under it (``over`` in ``prepare_server``). One
student may go over by what a server writes between two looks, once.

    jaxcourse-quota   (a service the hub starts; docker/hub/jupyterhub_config.py)
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.core import logs
from classroom import environment, internal_tls

log = logging.getLogger(__name__)

NOTE = "OVER_QUOTA.txt"
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def size_bytes(text: str) -> int:
    """``"2g"`` -> 2147483648."""
    return int(float(text[:-1]) * _UNITS[text[-1].lower()])


def used(folder: Path, limit: int | None = None) -> int:
    """Bytes under ``folder``, links not followed; stops counting once past ``limit``."""
    total = 0
    for root, folders, files in os.walk(folder):
        for name in files + folders:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass  # gone while we looked
        if limit is not None and total > limit:
            break
    return total


def over(folder: Path, quota: int) -> str:
    """Why ``folder`` may not be used now (over ``quota``), in one line, or ''."""
    held = used(folder, quota)
    if held <= quota:
        return ""
    return (
        f"your work folder holds more than the class's quota of {quota >> 20} MB: remove what you do not "
        "need (your instructor can, from the class directory), then start your server again"
    )


def sweep(home: Path, quota: int, running: set[str], stop: Callable[[str], None]) -> list[str]:
    """Stop the running servers whose work folders are over ``quota``; their names."""
    stopped = []
    for name in sorted(running):
        why = over(home / name, quota)
        if why:
            (home / name / NOTE).write_text(why + "\n")
            stop(name)
            stopped.append(name)
    return stopped


def main() -> None:  # run by the hub as a service; tests/classroom/hub tries it
    logs.configure()
    api, token = os.environ["JUPYTERHUB_API_URL"].rstrip("/"), os.environ["JUPYTERHUB_API_TOKEN"]
    home, quota = Path(os.environ[environment.CLASS_DIR]) / "home", size_bytes(os.environ[environment.WORK_QUOTA])
    every = float(os.environ.get(environment.QUOTA_EVERY, "60"))
    tls = internal_tls.client_context(api)  # the hub's API by TLS where the class crosses hosts

    def call(method: str, path: str) -> Any:
        request = urllib.request.Request(f"{api}{path}", method=method, headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=30, context=tls) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def stop(name: str) -> None:
        call("DELETE", f"/users/{name}/server")

    while True:
        try:
            users = call("GET", "/users?state=active")
            running = {u["name"] for u in users if u.get("servers")}
            for name in sweep(home, quota, running, stop):
                log.warning(f"jaxcourse quota: stopped {name}'s server: over {quota >> 20} MB")
        except OSError as err:  # the hub restarting: look again next time
            log.warning(f"jaxcourse quota: {err}")
        time.sleep(every)
