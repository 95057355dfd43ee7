"""Which of a Swarm service's tasks is a student's server, and whether it is alive, while a lost
node's students move (``docker/hub/jupyterhub_config.py``).

When a node is lost, its task still reads running, with running as its desired state, until the
manager writes it off, while the task that replaces it already starts on another node.
DockerSpawner's ``SwarmSpawner`` then finds "more than one running notebook task" and raises on
every poll; once the old one is written off, it calls the replacement stopped while it is only on
its way (assigned, accepted, ready: states it does not list), and the hub stops her server. The
replacement is always the newer task, and every state before running is a server on its way.
"""

from __future__ import annotations

from pprint import pformat
from typing import Any

# A task's states up to running (Docker's swarm API): the server is alive or on its way.
ALIVE = frozenset({"new", "allocated", "pending", "assigned", "accepted", "preparing", "ready", "starting", "running"})


def exit_status(task: dict[str, Any]) -> str | None:
    """None while the task is alive or on its way; else its status, as ``poll`` reports a stop."""
    status = task["Status"]
    return None if status["State"] in ALIVE else pformat(status)


def current_task(tasks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest of a service's tasks, or None. ``CreatedAt`` is the engine's RFC 3339 time in
    UTC, whose fractional digits vary in number, so it is compared as a time, not as text."""
    return max(tasks, key=lambda task: _created(task["CreatedAt"]), default=None)


def _created(stamp: str) -> tuple[str, float]:
    """``2026-11-27T07:58:01.123456789Z`` as (its seconds, to the second; the fraction)."""
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    return whole, float(f"0.{fraction or 0}")
