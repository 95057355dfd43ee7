"""The exchange service's routes and rules, on a real Tornado server: who a request is, and the
class's limits (count, size, due date) with the message each refusal gives.

The hub's token check is replaced here by a header naming the user, so that these rules can be
tried without a hub; tests/classroom/hub tries them, and the real check, through a real hub and proxy."""

from __future__ import annotations

import asyncio
import base64
import datetime
import socket
import threading
import time

import pytest
import requests
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from classroom.exchange import service
from classroom.exchange.store import Store

A = "01_collectives"
NOW = datetime.datetime(2026, 12, 2, 9, 0, tzinfo=datetime.UTC)


@pytest.fixture
def exchange(tmp_path, monkeypatch):
    """The service on a free port, over a store with ``A`` released; yields (url, store, config)."""
    monkeypatch.setattr(service.Handler, "get_current_user", _user_from_header)
    # Uploads in flight are counted per process; a refused upload of the test before may still
    # be lingering when its loop is stopped, and must not count against this test's students.
    monkeypatch.setattr(service.Submissions, "uploading", {})
    store, config = Store(tmp_path / "exchange"), tmp_path / "config"
    release, config_file = tmp_path / "release", config / "jaxcourse.toml"
    release.mkdir(), config.mkdir()
    (release / f"{A}.ipynb").write_text("{}")
    store.release(A, release)
    config_file.write_text('[class]\nmax_submissions = 2\nmax_submission_size = "1m"\n')
    # Bound here, to a port the kernel picks: a port found free and bound later can be taken in
    # between by whatever else a full run starts.
    sockets, loop = bind_sockets(0, "127.0.0.1"), asyncio.new_event_loop()
    port = sockets[0].getsockname()[1]
    started = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        app = service.make_app(store, config, "/services/exchange/", clock=lambda: NOW)
        HTTPServer(app).add_sockets(sockets)
        loop.call_soon(started.set)
        loop.run_forever()

    threading.Thread(target=serve, daemon=True).start()
    assert started.wait(10), "the exchange service did not start"
    yield f"http://127.0.0.1:{port}/services/exchange/api", store, config_file
    loop.call_soon_threadsafe(loop.stop)


def _user_from_header(handler):
    name = handler.request.headers.get("X-User")
    return {"kind": "user", "name": name} if name else None


def _submit(url, user, files):
    body = {"files": {n: base64.b64encode(d).decode() for n, d in files.items()}}
    return requests.post(f"{url}/assignments/{A}/submissions", json=body, headers={"X-User": user}, timeout=30)


def test_without_a_user_nothing_is_answered(exchange):
    url, _, _ = exchange
    got = requests.get(f"{url}/assignments", timeout=30)
    assert got.status_code == 403 and got.json()["error"] == "the exchange needs a student's or instructor's hub token"


def test_each_student_lists_and_fetches_feedback_of_their_own_only(exchange):
    url, store, _ = exchange
    assert _submit(url, "ada", {f"{A}.ipynb": b"{}"}).status_code == 201
    assert _submit(url, "bob", {f"{A}.ipynb": b"{}"}).status_code == 201
    (bobs,) = store.submissions("bob")
    store.write_feedback(bobs, {A: "<p>bob's feedback</p>"})
    mine = requests.get(f"{url}/assignments?student=bob", headers={"X-User": "ada"}, timeout=30).json()
    assert mine["student"] == "ada" and [s["assignment"] for s in mine["submissions"]] == [A]
    assert mine["released"] == [{"assignment": A, "files": [f"{A}.ipynb"]}]
    got = requests.get(f"{url}/assignments/{A}/feedback?student=bob", headers={"X-User": "ada"}, timeout=30)
    assert got.json() == {"assignment": A, "submissions": []}
    theirs = requests.get(f"{url}/assignments/{A}/feedback", headers={"X-User": "bob"}, timeout=30).json()
    assert [s["feedback"] for s in theirs["submissions"]] == [{A: "<p>bob's feedback</p>"}]


def test_the_third_submission_is_refused_with_the_limit(exchange):
    url, store, _ = exchange
    codes = [_submit(url, "ada", {f"{A}.ipynb": b"{}"}).status_code for _ in range(2)]
    third = _submit(url, "ada", {f"{A}.ipynb": b"{}"})
    assert codes == [201, 201] and third.status_code == 429
    assert third.json()["error"] == f"you have submitted {A} 2 times, the most allowed"
    assert len(store.submissions("ada")) == 2


def test_after_the_due_date_late_work_is_taken_or_refused_as_the_rules_say(exchange):
    url, store, config = exchange
    due = "2026-12-01T23:59:00+00:00"
    config.write_text(f'[class]\ndue = "{due}"\nlate = "refuse"\n')
    refused = _submit(url, "ada", {f"{A}.ipynb": b"{}"})
    assert (
        refused.status_code == 403 and refused.json()["error"] == f"{A} was due {due}; late submissions are not taken"
    )
    config.write_text(f'[class]\ndue = "{due}"\nlate = "accept"\n')
    assert _submit(url, "ada", {f"{A}.ipynb": b"{}"}).status_code == 201
    assert [s.timestamp for s in store.submissions("ada")] == ["2026-12-02 09:00:00.000000 UTC"]


def test_an_unreleased_assignment_cannot_be_submitted(exchange):
    url, _, _ = exchange
    body = {"files": {"x.ipynb": base64.b64encode(b"{}").decode()}}
    got = requests.post(
        f"{url}/assignments/02_sharded_matmul/submissions", json=body, headers={"X-User": "ada"}, timeout=30
    )
    assert got.status_code == 404 and got.json()["error"] == "02_sharded_matmul has not been released"


def test_too_large_is_refused_by_its_declared_size_and_as_it_grows(exchange):
    url, store, _ = exchange
    declared = _submit(url, "ada", {f"{A}.ipynb": b"x" * (3 << 20)})
    assert declared.status_code == 413
    assert declared.json()["error"] == "a submission may hold 1 MB; this one is 4 MB"

    def chunks():
        yield b'{"files": {"big.ipynb": "'
        for _ in range(3):
            yield b"A" * (1 << 20)

    grown = requests.post(f"{url}/assignments/{A}/submissions", data=chunks(), headers={"X-User": "ada"}, timeout=30)
    assert grown.status_code == 413 and grown.json()["error"] == "a submission may hold 1 MB; this one is larger"
    assert store.submissions("ada") == []


def test_a_body_that_is_not_a_submission_is_refused_with_its_shape(exchange):
    url, _, _ = exchange
    got = requests.post(f"{url}/assignments/{A}/submissions", data=b"not json", headers={"X-User": "ada"}, timeout=30)
    assert got.status_code == 400 and "a submission is JSON {'files': {name: base64}}" in got.json()["error"]


def test_an_upload_the_store_refuses_is_a_400_and_leaves_nothing(exchange):
    """A file beside a folder of the same name, or a NUL in a name: refused before anything is
    written, and nothing of it is kept where it could later pass for a submission."""
    url, store, _ = exchange
    for files in ({"a": b"1", "a/b": b"2"}, {"nb\x00.ipynb": b"{}"}):
        got = _submit(url, "ada", files)
        assert got.status_code == 400 and "is not allowed" in got.json()["error"], got.text
    kept = [p for p in store.root.rglob("*") if p.is_file() and "outbound" not in p.parts]
    assert kept == [] and store.submissions() == []


def _slow_upload(url: str, user: str) -> socket.socket:
    """An upload whose body has begun and then waits, holding its place, as a trickling client's."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    head = (
        f"POST {parts.path}/assignments/{A}/submissions HTTP/1.1\r\nHost: x\r\nX-User: {user}\r\n"
        f"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"files": {"a.ipynb": "')
    return sock


def test_one_students_uploads_in_flight_are_bounded(exchange):
    """Half-sent uploads are held in memory: one student may have two at once, a third is refused
    at once (429) and costs nothing, and others are unaffected; once hers end, she may submit."""
    url, store, _ = exchange
    slow = [_slow_upload(url, "eve") for _ in range(service.MAX_UPLOADS_EACH)]
    try:
        time.sleep(0.5)  # both under way
        third = _submit(url, "eve", {f"{A}.ipynb": b"{}"})
        assert third.status_code == 429 and "too many uploads at once" in third.json()["error"]
        assert _submit(url, "ada", {f"{A}.ipynb": b"{}"}).status_code == 201
    finally:
        for sock in slow:
            sock.close()
    time.sleep(0.5)  # the service sees them go
    assert _submit(url, "eve", {f"{A}.ipynb": b"{}"}).status_code == 201
    assert [s.student for s in store.submissions()] == ["ada", "eve"]
