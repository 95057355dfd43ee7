"""A container's Docker HEALTHCHECK, waited for: the lab, the hub, its proxy and Redis all say
they are ready this way."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..core.errors import JaxcourseError

if TYPE_CHECKING:
    from docker.models.containers import Container

POLL = 0.2  # seconds between looks


class Unhealthy(JaxcourseError):
    """The container exited, or was not healthy in time; the message ends with its last output."""


def wait_healthy(container: Container, timeout: float) -> float:
    """Seconds until the container's health check passes; ``Unhealthy`` if it exits first or is
    not healthy within ``timeout`` seconds."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        container.reload()
        state = container.attrs["State"]
        if state.get("Health", {}).get("Status") == "healthy":
            return time.monotonic() - start
        if state["Status"] in ("exited", "dead"):
            raise Unhealthy(f"{container.name} exited with status {state['ExitCode']}: {_last_output(container)}")
        time.sleep(POLL)
    raise Unhealthy(
        f"{container.name} was not healthy after {timeout:.0f} s; its last output: {_last_output(container)}"
    )


def _last_output(container: Container) -> str:
    tail = container.logs(tail=15).decode("utf-8", "replace").strip()
    return tail.splitlines()[-1] if tail else "none"
