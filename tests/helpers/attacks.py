"""A student's attacks on the class that both classes face, on one host (``tests/classroom/hub/test_attacks.py``)
and across a swarm (``tests/classroom/hub/test_swarm.py``): on the exchange, over HTTP with her own token,
and from inside her server. Each fails with the reason it should."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from pathlib import Path

from .classroom import wait_for
from .course import ASSIGNMENT
from .network import PROBES

# Run in her server: what of the class it holds, by name; what her token gets; filling her folder.
# /opt/venv is the image's own packages, the same in every server (nbgrader ships a test gradebook.db).
FILES_WALK = """
import json, os
hits = []
for root, dirs, files in os.walk('/', onerror=lambda e: None):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ('/proc', '/sys', '/dev', '/opt/venv')]
    hits += [os.path.join(root, n) for n in dirs + files if n in ('bob', 'alice', 'gradebook.db', 'solutions', 'roster.json')]
print(json.dumps({"hits": hits}))
"""
TOKEN_PROBE = (
    PROBES
    + """
api = os.environ["JUPYTERHUB_API_URL"]
print(json.dumps({"users": http(api + "/users"), "tokens": http(api + "/users/mallory/tokens", method="POST"),
                  "bob": http(api + "/users/bob")}))
"""
)
FILL_HER_FOLDER = """
import json
try:
    open('/opt/planted', 'w')
    root = 'written'
except OSError as err:
    root = err.strerror
open('/home/jovyan/work/big.bin', 'wb').write(b'x' * (60 << 20))
print(json.dumps({"root": root}))
"""


def exchange(user, method: str, path: str, **kwargs):
    """A call to the exchange's API through the proxy, on the origin the hub gives the service."""
    return user.service(method, "exchange", f"api/{path}", **kwargs)


def submit(user, files: dict[str, bytes], **extra):
    body = {"files": {n: base64.b64encode(d).decode() for n, d in files.items()}, **extra}
    return exchange(user, "POST", f"assignments/{ASSIGNMENT}/submissions", json=body)


def the_exchange_shows_her_only_her_own(mallory) -> None:
    listing = exchange(mallory, "GET", "assignments").json()
    assert listing["student"] == "mallory"
    assert all(s["assignment"] == ASSIGNMENT for s in listing["submissions"])  # and none of bob's or alice's
    feedback = exchange(mallory, "GET", f"assignments/{ASSIGNMENT}/feedback?student=bob").json()
    assert feedback["submissions"] == []  # alice and bob have feedback; a query cannot name them
    for path in ("assignments/..%2Finbound%2Fbob/files", "assignments/../inbound/bob/files", "students/bob/feedback"):
        got = exchange(mallory, "GET", path)
        assert got.status_code == 404, (path, got.status_code)


def without_a_real_token_the_exchange_refuses(mallory) -> None:
    anonymous = exchange(mallory, "GET", "assignments", headers={"Authorization": ""})
    forged = exchange(mallory, "GET", "assignments", headers={"Authorization": "token not-a-token"})
    assert anonymous.status_code in (302, 403) and forged.status_code in (302, 403)


def a_submission_is_filed_under_her_name(classdir: Path, mallory) -> None:
    before = len(list((classdir / "exchange" / "inbound" / "bob").glob(f"{ASSIGNMENT}/*")))
    got = submit(mallory, {"claims.txt": b"I am bob"}, student="bob")
    assert got.status_code == 201, got.text
    assert len(list((classdir / "exchange" / "inbound" / "bob").glob(f"{ASSIGNMENT}/*"))) == before
    assert list((classdir / "exchange" / "inbound" / "mallory" / ASSIGNMENT).glob("*/claims.txt"))


def released_files_and_feedback_cannot_be_written(mallory) -> None:
    for method, path in [
        ("PUT", f"assignments/{ASSIGNMENT}/files"),
        ("DELETE", f"assignments/{ASSIGNMENT}/files"),
        ("POST", f"assignments/{ASSIGNMENT}/feedback"),
        ("PUT", f"assignments/{ASSIGNMENT}/feedback"),
    ]:
        got = exchange(mallory, method, path, json={"files": {}})
        assert got.status_code == 405, (method, path, got.status_code)
    got = submit(mallory, {"../../outbound/01_collectives/01_collectives.ipynb": b"{}"})
    assert got.status_code == 400 and "is not allowed: use plain relative names" in got.json()["error"]


def over_quota_stops_her_server(classdir: Path, mallory, in_her_server: Callable[[str], dict]) -> None:
    """Her server's root is read-only and its home is memory of a fixed size; her work folder is
    the one disk she can fill, and past the class's quota (50 MB here) her server is stopped, a
    note says why, and the hub will not start it again while the folder stays over.
    ``in_her_server`` runs Python in her server as her (on one host, or on a swarm's node)."""
    folder = classdir / "home" / "mallory"
    try:
        assert in_her_server(FILL_HER_FOLDER) == {"root": "Read-only file system"}
        wait_for(
            lambda: not mallory.api("GET", "/hub/api/users/mallory").json().get("servers"),
            60,
            "the quota service to stop her server",
        )
        assert "more than the class's quota of 50 MB" in (folder / "OVER_QUOTA.txt").read_text()
        asked = mallory.api("POST", "/hub/api/users/mallory/server")
        time.sleep(5)
        running = mallory.api("GET", "/hub/api/users/mallory").json().get("servers", {}).get("", {})
        assert not running.get("ready"), (asked.status_code, asked.text[:500], running)
    finally:
        (folder / "big.bin").unlink(missing_ok=True)
        (folder / "OVER_QUOTA.txt").unlink(missing_ok=True)
