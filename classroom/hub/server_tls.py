"""A server's TLS certificate on a swarm class (``docker/hub/jupyterhub_config.py``): JupyterHub
makes it in the hub's container; Swarm secrets carry it to the one node that runs the server, in
memory there, never in the service's spec or on a disk; it goes when the server stops.

DockerSpawner's own way (a Docker volume filled on the hub's engine) stays on the hub's host, where
a server on another node cannot mount it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from docker import DockerClient
from docker.types import SecretReference

from . import swarm_secrets

SERVER_LABEL = "jaxcourse.server"  # value: the service whose certificate a secret holds
MOUNT = Path("/run/secrets")


def as_secrets(
    client: DockerClient, labels: dict[str, str], service: str, paths: dict[str, str], owner: tuple[int, int]
) -> tuple[list[Any], dict[str, str]]:
    """The files JupyterHub made for ``service`` (its key, certificate and trusted CAs) as Swarm
    secrets readable by ``owner`` (uid, gid) only, and where the server finds each. ``labels``
    are the class's, so that ``hub down`` finds them."""
    forget(client, service)  # a set left by a hub that stopped before the server did
    references, moved = [], {}
    for key, path in paths.items():
        data = Path(path).read_bytes()
        secret = _secret(client, {**labels, SERVER_LABEL: service}, key, data)
        references.append(
            SecretReference(secret.id, secret.name, filename=key, uid=str(owner[0]), gid=str(owner[1]), mode=0o400)
        )
        moved[key] = str(MOUNT / key)
    return references, moved


def _secret(client: DockerClient, labels: dict[str, str], key: str, data: bytes) -> Any:
    """A secret cannot change, so its name is a digest of whose it is and what it holds (short
    whatever the user's name: the labels say whose)."""
    whose = labels[SERVER_LABEL].encode()
    name = f"jaxcourse-tls-{hashlib.sha256(b'/'.join((whose, key.encode(), data))).hexdigest()[:24]}"
    return swarm_secrets.named(client, name, data, labels)


def forget(client: DockerClient, service: str) -> int:
    """Removes the secrets of ``service``'s certificate; one its stopping task still holds is left
    (the next start, or ``hub down``, removes it). Returns how many went."""
    return swarm_secrets.remove(client.secrets.list(filters={"label": f"{SERVER_LABEL}={service}"}))
