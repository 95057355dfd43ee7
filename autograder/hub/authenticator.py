"""JupyterHub's login for a class that runs offline: the roster's members, with the passwords
``jaxcourse hub up`` issued (or the roster set). Instructors are the hub's admins.

Configured in ``docker/hub/jupyterhub_config.py``:
``c.JupyterHub.authenticator_class = "autograder.hub.authenticator.RosterAuthenticator"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyterhub.auth import Authenticator
from traitlets import Unicode

from .roster import load_hashes, verify


class RosterAuthenticator(Authenticator):  # type: ignore[misc]  # jupyterhub is untyped
    roster_file = Unicode(help="roster.json written by `jaxcourse hub up`: name -> role, scrypt hash").tag(config=True)

    def _roster(self) -> dict[str, dict[str, str]]:
        # Read on every login: `jaxcourse hub up` with a new roster takes effect without a restart.
        return load_hashes(Path(self.roster_file))

    async def authenticate(self, handler: Any, data: dict[str, str]) -> dict[str, Any] | None:
        name = self.normalize_username(data.get("username", ""))
        entry = self._roster().get(name)
        if entry is None or not verify(data.get("password", ""), entry["hash"]):
            self.log.warning("failed login for %r", name[:40])
            return None
        return {"name": name, "admin": entry["role"] == "instructor"}

    def check_allowed(self, username: str, authentication: dict[str, Any] | None = None) -> bool:
        return username in self._roster()
