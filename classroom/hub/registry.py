"""The course image on every node of a swarm: a registry of the class's own on the manager
(``docker/swarm-registry``: Debian's docker-registry), which the nodes pull from. A node that
joins later, or comes back with an empty engine, gets the image by itself when a task lands on it.

The manager's engine pushes to the registry's store through a writable registry published on its
own loopback only, for the length of the push (an engine pushes to a loopback registry without
TLS). The nodes read the same store from a read-only registry on the swarm's address, over TLS
with a certificate from a CA of its own (``class_tls.py``) that each node's engine trusts: no one
can push to what the nodes pull, and a node pulls nothing from anything else posing as it.
Services name the image by digest, so every node runs exactly what was pushed.
"""

from __future__ import annotations

import logging
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import deploy
from .class_tls import ServerTLS, issue
from .images import REGISTRY_IMAGE, build_registry

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient

PORT = 5000  # the registry the nodes pull from, on the manager's swarm address
TLS_MOUNT = "/etc/jaxcourse/registry"
READY_S = 30.0


class RegistryError(deploy.HubError):
    """The class's registry did not start, or the image did not reach it."""


def tls(deployment: deploy.Deployment, address: str) -> ServerTLS:
    return issue(deployment.classdir.root / "secrets" / "registry-tls", "registry", address)


def trust_command(made: ServerTLS, address: str) -> list[str]:
    """What each node runs as root, once, so that its engine trusts the class's registry at
    ``address`` (and nothing else signed by that CA, which signs nothing else): ``made``'s CA,
    copied to the same path."""
    folder = f"/etc/docker/certs.d/{address}:{PORT}"
    return ["sh", "-c", f"mkdir -p {folder} && cp {shlex.quote(str(made.ca))} {folder}/ca.crt"]


def publish(client: DockerClient, deployment: deploy.Deployment, images: list[str], address: str) -> dict[str, str]:
    """Each of ``images`` pushed to the class's registry, and that registry serving the nodes at
    ``address``; the name each image has there, by digest."""
    build_registry(client, deploy.source_repo())
    store = f"{deployment.name}-registry"
    client.volumes.create(store, labels=deployment.labels)  # the same volume when it exists
    pushed = _push(client, deployment, store, images)
    made = tls(deployment, address)
    serving = serve_options(deployment, store, made, address)
    deploy.start(client, store, lambda c: _wait_serving(address, made), renew=True, **serving)
    log.info(
        f"on each node, with {made.ca} copied to the same path, so that its engine trusts the class's registry, "
        f"run as root: {shlex.join(trust_command(made, address))}"
    )
    return {image: f"{address}:{PORT}/{pushed[image]}" for image in images}


def serve_options(deployment: deploy.Deployment, store: str, made: ServerTLS, address: str) -> dict[str, Any]:
    """The read-only registry on the swarm's address, with the class's certificate, as the class
    directory's owner (who alone reads the certificate's key)."""
    return {
        "image": REGISTRY_IMAGE,
        "ports": {f"{PORT}/tcp": (address, PORT)},
        "volumes": {
            store: {"bind": "/var/lib/docker-registry", "mode": "ro"},
            str(made.folder): {"bind": TLS_MOUNT, "mode": "ro"},
        },
        "mem_limit": "256m",
        **deploy.owner(deployment),
        **deploy.locked_down(),
    }


def _push(client: DockerClient, deployment: deploy.Deployment, store: str, images: list[str]) -> dict[str, str]:
    """Each image pushed through a writable registry on this host's loopback, then gone (one a
    failed push left is removed first); each image's ``repository:tag@digest`` in the store."""
    from autograder.engine.containers import host_port, remove, running

    for left in client.containers.list(all=True, filters={"name": f"^{store}-push$"}):
        remove(left)
    with running(
        client,
        image=REGISTRY_IMAGE,
        command=["/etc/jaxcourse-registry/push.yml"],
        name=f"{store}-push",
        ports={f"{PORT}/tcp": ("127.0.0.1", None)},
        volumes={store: {"bind": "/var/lib/docker-registry", "mode": "rw"}},
        labels=deployment.labels,
        **deploy.locked_down(),
    ) as container:
        port = host_port(container, f"{PORT}/tcp")
        _wait_answering(f"http://127.0.0.1:{port}/v2/", None)
        return {image: _push_one(client, image, f"127.0.0.1:{port}") for image in images}


def _push_one(client: DockerClient, image: str, registry: str) -> str:
    """``image`` pushed to ``registry`` under its own repository and tag; its ``name:tag@digest``."""
    repository, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "latest")
    target = f"{registry}/{repository}"
    client.images.get(image).tag(target, tag)
    try:
        digest = ""
        for line in client.api.push(target, tag, stream=True, decode=True):
            if "error" in line:
                raise RegistryError(f"pushing {image} to the class's registry failed: {line['error']}")
            digest = (line.get("aux") or {}).get("Digest", digest)
    finally:
        client.images.remove(f"{target}:{tag}", noprune=True)
    if not digest:
        raise RegistryError(f"pushing {image} to the class's registry gave no digest")
    log.info(f"{image}: in the class's registry as {repository}:{tag}@{digest}")
    return f"{repository}:{tag}@{digest}"


def _wait_serving(address: str, made: ServerTLS) -> None:
    _wait_answering(f"https://{address}:{PORT}/v2/", made.ca)


def _wait_answering(url: str, ca: Path | None) -> None:
    """``url`` answers 200 (checked against ``ca`` when given) within ``READY_S`` seconds."""
    import requests

    deadline = time.monotonic() + READY_S
    while True:
        try:
            answer = requests.get(url, timeout=5, verify=str(ca) if ca else True)
            if answer.status_code == 200:
                return
            why = f"HTTP {answer.status_code}"
        except requests.RequestException as err:
            why = str(err)
        if time.monotonic() > deadline:
            raise RegistryError(f"the class's registry did not answer at {url} in {READY_S:g} s: {why}")
        time.sleep(0.2)
