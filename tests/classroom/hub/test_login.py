"""Logging in: the roster's passwords, checked off the hub's event loop on a bounded pool, and
failed logins throttled per user name and per client address, so that a flood of wrong passwords
costs the hub a lookup each and never a hash. The authenticator is JupyterHub's own class, driven
here in-process; tests/classroom/hub floods a real hub, and benchmarks/login_flood.py measures its API."""

from __future__ import annotations

import asyncio
import threading
import types

import pytest
from tornado import web

from classroom import roster
from classroom.hub import authenticator
from classroom.hub.throttle import MAX_WAIT, Throttle


@pytest.fixture
def login(tmp_path):
    """``login(name, password, address)``: the authenticator's answer, on one authenticator."""
    roster.install(
        [roster.Member("ada", "student", "ada-pw-123"), roster.Member("teach", "instructor", "teach-pw-1")],
        tmp_path / "hub",
        tmp_path / "secrets",
    )
    auth = authenticator.RosterAuthenticator(roster_file=str(tmp_path / "hub" / "roster.json"))

    def attempt(name: str, password: str, address: str = "10.0.0.1"):
        handler = types.SimpleNamespace(request=types.SimpleNamespace(remote_ip=address))
        return asyncio.run(auth.authenticate(handler, {"username": name, "password": password}))

    attempt.auth = auth
    return attempt


def test_members_log_in_with_their_passwords_only(login):
    assert login("ada", "ada-pw-123") == {"name": "ada", "admin": False}
    assert login("teach", "teach-pw-1") == {"name": "teach", "admin": True}
    assert login("ada", "teach-pw-1") is None
    assert login("zed", "not a member") is None  # the stand-in hash's own password opens nothing


def test_a_name_that_keeps_failing_waits_even_with_the_right_password(login):
    for _ in range(5):
        assert login("ada", "guess", address="10.0.0.9") is None
    with pytest.raises(web.HTTPError) as refused:
        login("ada", "ada-pw-123", address="10.0.0.7")
    assert refused.value.status_code == 429 and "too many failed logins: try again in" in refused.value.log_message
    assert login("teach", "teach-pw-1", address="10.0.0.9") == {"name": "teach", "admin": True}


def test_an_address_that_keeps_failing_waits_whatever_the_name(login):
    for number in range(login.auth.failures_per_address):
        assert login(f"made-up-{number}", "guess", address="10.0.0.66") is None
    with pytest.raises(web.HTTPError) as refused:
        login("teach", "teach-pw-1", address="10.0.0.66")
    assert refused.value.status_code == 429
    assert login("teach", "teach-pw-1", address="10.0.0.5") == {"name": "teach", "admin": True}


def test_passwords_are_checked_off_the_event_loop(login, monkeypatch):
    threads = []

    def recording(password, stored):
        threads.append(threading.current_thread().name)
        return roster.verify(password, stored)

    monkeypatch.setattr(authenticator, "verify", recording)
    assert login("ada", "ada-pw-123")
    assert threads and all(name.startswith("scrypt") for name in threads), threads


def test_more_checks_than_may_wait_are_refused_at_once(login, monkeypatch):
    """A flood queues no more than ``max_pending`` hashes: the rest are told the hub is busy."""
    release = threading.Event()
    monkeypatch.setattr(authenticator, "verify", lambda password, stored: release.wait(10))
    auth = login.auth
    auth.max_pending = 2

    async def flood():
        handler = types.SimpleNamespace(request=types.SimpleNamespace(remote_ip="10.0.0.2"))
        tries = [
            asyncio.ensure_future(auth.authenticate(handler, {"username": "ada", "password": "x"})) for _ in range(3)
        ]
        await asyncio.sleep(0.2)
        release.set()
        return await asyncio.gather(*tries, return_exceptions=True)

    answers = asyncio.run(flood())
    busy = [a for a in answers if isinstance(a, web.HTTPError)]
    assert len(busy) == 1 and busy[0].status_code == 429 and "busy checking logins" in busy[0].log_message


def test_the_wait_doubles_past_the_limit_and_the_window_forgets():
    now = [0.0]
    throttle = Throttle(limit=2, window=100.0, clock=lambda: now[0])
    waits = []
    for _ in range(9):
        throttle.failed("k")
        waits.append(throttle.wait("k"))
    assert waits == [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, MAX_WAIT, MAX_WAIT]
    now[0] = 101.0
    assert throttle.wait("k") == 0.0 and "k" not in {k for k, v in throttle.failures.items() if v}
