"""A class hub driven over HTTP as its users drive it: log in through the hub's login form, get a
token, start a server, and call nbgrader's Assignments endpoints (the ones its panel calls)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import requests

from .course import ASSIGNMENT

COURSE_ID = "jax-distributed"
SHOTS = (
    Path(__file__).resolve().parents[2] / "build" / "test-artifacts" / "hub-browser"
)  # the browser tests' screenshots
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROSTER = {
    "alice": "student",
    "bob": "student",
    "carol": "student",
    "mallory": "student",
    "ann_lee": "student",
    "teach": "instructor",
}
# Three submissions each: the attacker's thousand are refused after the third. A work folder holds
# 50 MB, looked at every 3 s: the attacker's 60 MB stops her server.
CLASS_RULES = (
    '[class]\nmax_submissions = 3\nmax_submission_size = "2m"\n'
    '[hub]\nmemory = "2g"\ncpus = 1.0\nwork_quota = "50m"\nquota_every = 3\n'
)


def run_jaxcourse(course_root: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """The `jaxcourse` command on ``course_root``, whatever its exit."""
    env = {**os.environ, "JAXCOURSE_ROOT": str(course_root), "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "jaxcourse", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def jaxcourse(course_root: Path, *args: str, timeout: float = 900) -> str:
    """The `jaxcourse` command on ``course_root``; its output, or the test fails with it."""
    done = run_jaxcourse(course_root, *args, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def resolve_localhost_subdomains() -> None:
    """``<anything>.localhost`` resolves to this machine here, as browsers resolve it: each user's
    server of a class on this machine is at ``<user>.localhost`` (an origin of its own), and this
    machine's resolver knows only ``localhost`` itself. Idempotent."""
    if getattr(socket.getaddrinfo, "resolves_localhost_subdomains", False):
        return
    original = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".localhost"):
            host = "127.0.0.1"
        return original(host, *args, **kwargs)

    getaddrinfo.resolves_localhost_subdomains = True  # type: ignore[attr-defined]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]


def subdomain(url: str, name: str, kind: str = "user") -> str:
    """``url`` (the hub's, ``http://jaxcourse.localhost:PORT``) on the subdomain JupyterHub gives a user's
    server or a service."""
    from jupyterhub.utils import subdomain_hook_idna

    scheme, rest = url.split("://", 1)
    host, _, port = rest.partition(":")
    return f"{scheme}://{subdomain_hook_idna(name, host, kind)}{':' + port if port else ''}"


@dataclass
class User:
    hub: str  # http://jaxcourse.localhost:PORT: each user's server is at http://<user>.jaxcourse.localhost:PORT
    name: str
    password: str
    session: requests.Session = field(default_factory=requests.Session)
    token: str = ""

    def login(self) -> requests.Response:
        page = self.session.get(f"{self.hub}/hub/login", timeout=30)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        form = {"username": self.name, "password": self.password, **({"_xsrf": xsrf.group(1)} if xsrf else {})}
        return self.session.post(f"{self.hub}/hub/login", data=form, timeout=60, allow_redirects=False)

    def make_token(self) -> str:
        """A token of this user's own, made with the session the login gave."""
        xsrf = self.session.cookies.get("_xsrf", "")
        got = self.session.post(
            f"{self.hub}/hub/api/users/{self.name}/tokens",
            json={"note": "tests"},
            headers={"X-XSRFToken": xsrf},
            timeout=30,
        )
        got.raise_for_status()
        self.token = got.json()["token"]
        return self.token

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"token {self.token}", **kwargs.pop("headers", {})}
        return requests.request(
            method, f"{self.hub}{path}", headers=headers, timeout=kwargs.pop("timeout", 120), **kwargs
        )

    def ready(self) -> User:
        """Logged in (once), with a token, and the server running: where most tests start."""
        if not self.token:
            assert self.login().status_code == 302, f"{self.name} could not log in"
            self.make_token()
        self.start_server()
        return self

    def start_server(self, timeout: float = 240) -> float:
        """Ask the hub for this user's server; the seconds until it answers."""
        start = time.monotonic()
        asked = self.api("POST", f"/hub/api/users/{self.name}/server")
        assert asked.status_code in (201, 202, 400), asked.text  # 400: already running
        while time.monotonic() - start < timeout:
            model = self.api("GET", f"/hub/api/users/{self.name}").json()
            server = model.get("servers", {}).get("", {})
            if server.get("ready"):
                return time.monotonic() - start
            time.sleep(0.25)
        raise AssertionError(f"{self.name}'s server did not start in {timeout} s")

    def server(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A call to this user's own server, on its own origin."""
        url = f"{subdomain(self.hub, self.name)}/user/{self.name}/{path.lstrip('/')}"
        headers = {"Authorization": f"token {self.token}", **kwargs.pop("headers", {})}
        return requests.request(method, url, headers=headers, timeout=kwargs.pop("timeout", 120), **kwargs)

    def service(self, method: str, name: str, path: str, **kwargs: Any) -> requests.Response:
        """A call to the hub's service ``name`` (the exchange), on the origin the hub gives it."""
        url = f"{subdomain(self.hub, name, 'service')}/services/{name}/{path.lstrip('/')}"
        headers = {"Authorization": f"token {self.token}", **kwargs.pop("headers", {})}
        return requests.request(method, url, headers=headers, timeout=kwargs.pop("timeout", 120), **kwargs)

    def assignments(self) -> list[dict[str, Any]]:
        got = self.server("GET", f"assignments?course_id={COURSE_ID}")
        got.raise_for_status()
        body = got.json()
        assert body["success"], body
        listing: list[dict[str, Any]] = body["value"]
        return listing

    def action(self, action: str, assignment: str) -> Any:
        """fetch, submit or fetch_feedback, as the Assignments panel posts it."""
        got = self.server("POST", f"assignments/{action}", data={"course_id": COURSE_ID, "assignment_id": assignment})
        got.raise_for_status()
        body = got.json()
        assert body["success"], body
        return body["value"]


def submitted(listing: list[dict[str, Any]], assignment: str) -> list[dict[str, Any]]:
    for entry in listing:
        if entry.get("status") == "submitted" and entry["assignment_id"] == assignment:
            subs: list[dict[str, Any]] = entry["submissions"]
            return subs
    return []


def put_notebook(user: User, nb: Any, assignment: str = ASSIGNMENT) -> None:
    """Save ``nb`` as the student's copy of the assignment, through their server's contents API."""
    body = {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))}
    got = user.server("PUT", f"api/contents/{assignment}/{assignment}.ipynb", json=body)
    assert got.status_code in (200, 201), got.text


def save_logs(client: Any, name: str, folder: Path) -> None:
    """Every container of the class ``name``, its output kept under ``folder`` (a CI artifact)."""
    folder.mkdir(parents=True, exist_ok=True)
    for container in client.containers.list(all=True, filters={"name": f"^{name}-"}):
        (folder / f"{container.name}.log").write_bytes(container.logs(tail=5000))
