"""JupyterHub's login for a class that runs offline: the roster's members, with the passwords
``jaxcourse hub up`` issued (or the roster set). Instructors are the hub's admins.

A password is checked with scrypt (about 0.1 s of one core), off the hub's event loop, on at
most ``hashers`` threads with at most ``max_pending`` waiting; failures are throttled per user
name and per client address (``throttle.py``). A flood of wrong passwords therefore costs the hub
little, and its API, OAuth and token checks keep answering.

Configured in ``docker/hub/jupyterhub_config.py``:
``c.JupyterHub.authenticator_class = "classroom.hub.authenticator.RosterAuthenticator"``.
"""

from __future__ import annotations

import asyncio
import math
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from jupyterhub.auth import Authenticator
from jupyterhub.handlers.login import LoginHandler
from tornado import web
from traitlets import Float, Integer, Unicode

from classroom.roster import hash_password, load_hashes, verify

from .throttle import Throttle

TARPIT = 1.0  # seconds a throttled client's answer is held
MAX_HELD = 256  # answers held at once, at most (each costs a socket and a timer, no work)


class RosterAuthenticator(Authenticator):  # type: ignore[misc]  # jupyterhub is untyped
    roster_file = Unicode(help="roster.json written by `jaxcourse hub up`: name -> role, scrypt hash").tag(config=True)
    failures_per_name = Integer(5, help="failed logins one user name may have in `window` before it waits").tag(
        config=True
    )
    # A classroom behind one NAT shares an address: its limit is a class's typos, not one person's.
    failures_per_address = Integer(50, help="failed logins one client address may have in `window`").tag(config=True)
    window = Float(300.0, help="seconds over which failed logins are counted").tag(config=True)
    hashers = Integer(2, help="threads that check passwords (scrypt), off the hub's event loop").tag(config=True)
    max_pending = Integer(8, help="password checks that may wait for a thread; more are refused").tag(config=True)

    @cached_property
    def _names(self) -> Throttle:
        return Throttle(self.failures_per_name, self.window)

    @cached_property
    def _addresses(self) -> Throttle:
        return Throttle(self.failures_per_address, self.window)

    @cached_property
    def _pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=self.hashers, thread_name_prefix="scrypt")

    @cached_property
    def _unknown(self) -> str:
        """A hash to check an unknown name's password against, so that it takes as long as a
        member's: the time of a failed login says nothing of who is on the roster."""
        return hash_password("not a member")

    _pending = 0

    def _roster(self) -> dict[str, dict[str, str]]:
        # Read on every login: `jaxcourse hub up` with a new roster takes effect without a restart.
        return load_hashes(Path(self.roster_file))

    def waiting(self, name: str, address: str) -> str:
        """Why a login for ``name`` from ``address`` is refused before any password is looked
        at (too many failures of either), in words; '' when it may be tried."""
        wait = max(self._names.wait(self.normalize_username(name)), self._addresses.wait(address or "unknown"))
        return f"too many failed logins: try again in {math.ceil(wait)} s" if wait else ""

    def get_handlers(self, app: Any) -> list[tuple[str, Any]]:
        return [("/login", ThrottledLoginHandler)]

    async def authenticate(self, handler: Any, data: dict[str, str]) -> dict[str, Any] | None:
        name = self.normalize_username(data.get("username", ""))
        address = str(getattr(handler.request, "remote_ip", "") or "unknown")
        why = self.waiting(name, address)
        if why:
            self.log.warning("login for %r from %s refused: too many failures", name[:40], address)
            raise web.HTTPError(429, why)
        entry = self._roster().get(name)
        right = await self._verify(data.get("password", ""), entry["hash"] if entry else self._unknown)
        if entry is None or not right:
            self._names.failed(name)
            self._addresses.failed(address)
            self.log.warning("failed login for %r from %s", name[:40], address)
            return None
        self._names.succeeded(name)
        return {"name": name, "admin": entry["role"] == "instructor"}

    async def _verify(self, password: str, stored: str) -> bool:
        """scrypt on the hashers' threads; refused at once while ``max_pending`` already wait."""
        if self._pending >= self.max_pending:
            raise web.HTTPError(429, "the hub is busy checking logins: try again in a few seconds")
        self._pending += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, verify, password, stored)
        finally:
            self._pending -= 1

    def check_allowed(self, username: str, authentication: dict[str, Any] | None = None) -> bool:
        return username in self._roster()


class ThrottledLoginHandler(LoginHandler):  # type: ignore[misc]  # jupyterhub is untyped
    """JupyterHub's login page, which answers a throttled name or address with a short 429 (no
    page rendered, no password hashed) after holding it for a second: a client that waits for
    its answers, as a flood's threads do, then sends one attempt a second each, not hundreds. At
    most ``MAX_HELD`` answers are held at once; past that, they go at once."""

    held: ClassVar[int] = 0

    async def get(self) -> None:
        why = self.authenticator.waiting("", self.request.remote_ip)
        if why:
            await self._refuse(why)
            return
        await super().get()

    async def post(self) -> None:
        why = self.authenticator.waiting(self.get_body_argument("username", ""), self.request.remote_ip)
        if why:
            await self._refuse(why)
            return
        await super().post()

    async def _refuse(self, why: str) -> None:
        if ThrottledLoginHandler.held < MAX_HELD:
            ThrottledLoginHandler.held += 1
            try:
                await asyncio.sleep(TARPIT)
            finally:
                ThrottledLoginHandler.held -= 1
        self.set_status(429)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(why + "\n")
