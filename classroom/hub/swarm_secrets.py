"""Swarm secrets as the class keeps them: a secret cannot change, so each name carries a digest of
what it holds, and a secret is found by that exact name or made; one still held by a service is
left when the class removes what it no longer needs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docker import DockerClient


def named(client: DockerClient, name: str, data: bytes, labels: dict[str, str]) -> Any:
    """The secret ``name`` (the engine's name filter also matches longer names), made with
    ``data`` and ``labels`` the first time."""
    found = [s for s in client.secrets.list(filters={"name": name}) if s.name == name]
    return found[0] if found else client.secrets.create(name=name, data=data, labels=labels)


def remove(secrets: Iterable[Any]) -> int:
    """Removes each of ``secrets`` a service no longer holds; returns how many went."""
    from docker.errors import APIError

    removed = 0
    for secret in secrets:
        try:
            secret.remove()
            removed += 1
        except APIError:  # still named by a service, or a task stopping: the next sweep takes it
            pass
    return removed
