"""The exchange as a JupyterHub service: every request carries a hub token, and the hub's name
for that token is the only student a request can read or write. No route takes a student's name.

    GET  api/assignments                     released assignments, and the caller's submissions
    GET  api/assignments/<a>/files           the released files of <a>
    POST api/assignments/<a>/submissions     submit <a> (JSON: {"files": {name: base64}})
    GET  api/assignments/<a>/feedback        the caller's released feedback for <a>

Limits per student and assignment (count, size, due date) come from ``jaxcourse.toml``'s
``[class]`` tables; a refusal says which limit and what it is. Run by the hub as a managed
service: ``jaxcourse-exchange``.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import json
import os
import re
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from jupyterhub.services.auth import HubAuthenticated
from tornado import web
from tornado.http1connection import HTTP1Connection
from tornado.ioloop import IOLoop

from autograder.grading.submission import notebooks
from classroom import environment, internal_tls

from . import policy
from .store import Store, StoreError, Submission

Clock = Callable[[], datetime.datetime]
ASSIGNMENT = r"([A-Za-z0-9][A-Za-z0-9_.-]{0,63})"
JSON_OVERHEAD = 64 << 10  # the JSON around a submission's base64 files
LINGER = 8 << 20  # bytes of a refused body read and dropped before its connection is closed
LINGER_S = 10.0  # seconds the same
MAX_UPLOADS_EACH = 2  # one student's uploads in flight at once
MAX_UPLOADS = 16  # everyone's: what the service holds in memory is bounded by this many bodies
BODY_TIMEOUT = 120.0  # seconds a body may take to arrive; a trickling upload is cut off


class Handler(HubAuthenticated, web.RequestHandler):  # type: ignore[misc]  # jupyterhub is untyped
    """Every route: a hub user (never a service), JSON in and out, errors as {"error": ...}."""

    def initialize(self, store: Store, config_root: Path, clock: Clock) -> None:
        self.store, self.config_root, self.clock = store, config_root, clock

    def prepare(self) -> None:
        user = self.current_user
        if not user or user.get("kind") != "user":
            raise web.HTTPError(403, "the exchange needs a student's or instructor's hub token")

    @property
    def student(self) -> str:
        name: str = self.current_user["name"]
        return name

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None, None))[1]
        reason = error.log_message if isinstance(error, web.HTTPError) and error.log_message else self._reason
        self.finish({"error": reason})

    def rules(self, assignment: str) -> policy.Policy:
        return policy.load(self.config_root, assignment)


class Assignments(Handler):
    def get(self) -> None:
        mine = self.store.submissions(self.student)
        self.finish(
            {
                "student": self.student,
                "released": [
                    {"assignment": a, "files": sorted(self.store.released_files(a))} for a in self.store.released()
                ],
                "submissions": [_listed(self.store, s) for s in mine],
            }
        )


class Files(Handler):
    def get(self, assignment: str) -> None:
        try:
            files = self.store.released_files(assignment)
        except StoreError as err:
            raise web.HTTPError(404, str(err)) from None
        self.finish({"assignment": assignment, "files": {n: base64.b64encode(d).decode() for n, d in files.items()}})


@web.stream_request_body
class Submissions(Handler):
    """A body larger than the limit is refused as soon as that is known (by its declared size,
    before any of it is read, or once it has grown past the limit) and never kept."""

    uploading: ClassVar[dict[str, int]] = {}  # student -> uploads of theirs in flight, in this process

    def prepare(self) -> None:
        super().prepare()
        self.assignment = self.path_args[0]
        if self.assignment not in self.store.released():
            raise web.HTTPError(404, f"{self.assignment} has not been released")
        if self.uploading.get(self.student, 0) >= MAX_UPLOADS_EACH or sum(self.uploading.values()) >= MAX_UPLOADS:
            raise web.HTTPError(429, "too many uploads at once: wait for the one under way, then submit again")
        self.uploading[self.student] = self.uploading.get(self.student, 0) + 1
        self.counted = True
        self.limit = self.rules(self.assignment).max_bytes
        self.allowed = self.limit * 4 // 3 + JSON_OVERHEAD
        self.body, self.dropped, self.refused = bytearray(), 0, False
        connection = self.request.connection
        if isinstance(connection, HTTP1Connection):  # the size is judged here, with an answer
            connection.set_max_body_size(1 << 62)
        declared = int(self.request.headers.get("Content-Length", "0") or 0)
        if declared > self.allowed:
            self.refuse(f"a submission may hold {self.limit >> 20} MB; this one is {declared >> 20} MB")

    def on_finish(self) -> None:
        self._uncount()

    def on_connection_close(self) -> None:  # a client that went away mid-body
        self._uncount()
        super().on_connection_close()

    def _uncount(self) -> None:
        if getattr(self, "counted", False):
            self.counted = False
            self.uploading[self.student] -= 1
            if not self.uploading[self.student]:
                del self.uploading[self.student]

    def refuse(self, message: str) -> None:
        """Answer 413 now, then read and drop at most LINGER more bytes (for LINGER_S at most)
        before closing, as web servers do: a connection closed on unread data is reset, and the
        proxy would show the student a 503 instead of this answer."""
        self.refused, self.body = True, bytearray()
        answer = json.dumps({"error": message}).encode()
        self.set_status(413)
        self.set_header("Content-Type", "application/json")
        self.set_header("Content-Length", str(len(answer)))
        self.write(answer)
        self.flush()
        IOLoop.current().call_later(LINGER_S, self._close)

    def _close(self) -> None:
        if not self._finished:
            self.finish()

    def data_received(self, chunk: bytes) -> None:
        if self.refused:
            self.dropped += len(chunk)
            if self.dropped > LINGER:
                self._close()
            return
        self.body.extend(chunk)
        if len(self.body) > self.allowed:
            self.refuse(f"a submission may hold {self.limit >> 20} MB; this one is larger")

    def post(self, assignment: str) -> None:
        if self.refused:  # the whole of a refused body arrived while lingering
            self._close()
            return
        rules, now = self.rules(assignment), self.clock()
        used = len(self.store.submissions(self.student, assignment))
        if used >= rules.max_submissions:
            raise web.HTTPError(429, f"you have submitted {assignment} {used} times, the most allowed")
        due = rules.due_at()
        if due is not None and now > due and rules.late == "refuse":
            raise web.HTTPError(403, f"{assignment} was due {rules.due}; late submissions are not taken")
        files = _decoded(bytes(self.body))
        size = sum(len(d) for d in files.values())
        if size > self.limit:
            raise web.HTTPError(413, f"a submission may hold {self.limit >> 20} MB; this one holds {size >> 20} MB")
        _refuse_unreadable(files)
        try:
            submission = self.store.submit(self.student, assignment, files, now)
        except StoreError as err:
            raise web.HTTPError(400, str(err)) from None
        self.set_status(201)
        self.finish(_listed(self.store, submission))


class Feedback(Handler):
    def get(self, assignment: str) -> None:
        pages = [
            {"timestamp": s.timestamp, "feedback": self.store.feedback(s)}
            for s in self.store.submissions(self.student, assignment)
        ]
        self.finish({"assignment": assignment, "submissions": [p for p in pages if p["feedback"]]})


def _listed(store: Store, submission: Submission) -> dict[str, Any]:
    """A submission as the caller sees it: its notebooks, and a digest of each feedback page
    (the panel offers to fetch feedback again when it changed)."""
    pages = store.feedback(submission)
    return {
        "assignment": submission.assignment,
        "timestamp": submission.timestamp,
        "notebooks": [Path(n).stem for n in store.files(submission) if n.endswith(".ipynb")],
        "feedback": {n: hashlib.md5(page.encode()).hexdigest() for n, page in pages.items()},
    }


def _decoded(body: bytes) -> dict[str, bytes]:
    try:
        data = json.loads(body)
        files = data["files"]
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise TypeError("files must map names to base64 text")
        return {str(name): base64.b64decode(value, validate=True) for name, value in files.items()}
    except (ValueError, KeyError, TypeError, binascii.Error) as err:
        raise web.HTTPError(400, f"a submission is JSON {{'files': {{name: base64}}}} ({type(err).__name__})") from None


def _refuse_unreadable(files: dict[str, bytes]) -> None:
    """A notebook no grader could read (not UTF-8, not JSON, not of a notebook's shape) is
    refused now, with the reason, rather than graded as invalid later."""
    for name, data in files.items():
        if name.endswith(".ipynb"):
            try:
                notebooks.check_submitted(data, name)
            except notebooks.NotebookError as err:
                raise web.HTTPError(400, str(err)) from None


def make_app(store: Store, config_root: Path, prefix: str, clock: Clock | None = None) -> web.Application:
    settings = {
        "store": store,
        "config_root": config_root,
        "clock": clock or (lambda: datetime.datetime.now(datetime.UTC)),
    }
    base = re.escape(prefix.rstrip("/"))
    return web.Application(
        [
            (rf"{base}/api/assignments", Assignments, settings),
            (rf"{base}/api/assignments/{ASSIGNMENT}/files", Files, settings),
            (rf"{base}/api/assignments/{ASSIGNMENT}/submissions", Submissions, settings),
            (rf"{base}/api/assignments/{ASSIGNMENT}/feedback", Feedback, settings),
        ]
    )


def listeners(port: int, hub_address: str) -> list[tuple[int, str, ssl.SSLContext | None]]:
    """Where the service listens: the hub's port, for the proxy; students' servers on the class
    network at the same port (one host), or, where the class crosses hosts, only by TLS at a port
    of their own, the proxy's keeping to loopback inside the hub's container."""
    bind = os.environ.get(environment.EXCHANGE_BIND) or hub_address
    store = os.environ.get(environment.EXCHANGE_TLS)
    if not store:
        return [(port, bind, None)]
    tls_port = int(os.environ[environment.EXCHANGE_TLS_PORT])
    return [(port, "127.0.0.1", None), (tls_port, bind, internal_tls.server_context(Path(store)))]


def main() -> None:
    import asyncio
    from urllib.parse import urlparse

    url = urlparse(os.environ["JUPYTERHUB_SERVICE_URL"])
    store = Store(Path(os.environ[environment.CLASS_DIR]) / "exchange")
    app = make_app(
        store,
        Path(os.environ.get(environment.CONFIG_DIR, "/etc/jaxcourse")),
        os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/exchange/"),
    )

    async def serve() -> None:
        for port, address, tls in listeners(url.port or 80, url.hostname or "127.0.0.1"):
            app.listen(port, address, ssl_options=tls, body_timeout=BODY_TIMEOUT, idle_connection_timeout=BODY_TIMEOUT)
        await asyncio.Event().wait()

    asyncio.run(serve())
