"""``jaxcourse hub down``: a class on this Docker host stopped and removed, with what it started
(students' servers, sandboxes a grader left, a swarm's services and secrets); its state stays."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from autograder.engine import images

from .deploy import LABEL, Deployment

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container


def down(deployment: Deployment) -> int:
    """Stop and remove the class's containers (students' servers too), networks and volumes (a
    swarm's image registry: the images are this host's, pushed again by the next ``up``); the
    class directory keeps all state. Returns how many containers were removed."""
    from autograder.engine.containers import remove

    client = images.connect()
    mine_only = {"label": f"{LABEL}={deployment.name}"}
    on_a_swarm = client.info()["Swarm"].get("ControlAvailable")  # a class whose queue is on a swarm
    for service in client.services.list(filters=mine_only) if on_a_swarm else ():
        service.remove()  # first, or Swarm would start again the tasks removed below
    mine = client.containers.list(all=True, filters=mine_only)
    mine += client.containers.list(all=True, filters={"name": f"^{deployment.name}-lab-"})
    for container in {c.id: c for c in mine}.values():
        remove(container)
    for sandbox in _sandboxes_of(client, mine):  # what a worker or an instructor was grading
        remove(sandbox)
    for secret in client.secrets.list(filters=mine_only) if on_a_swarm else ():
        secret.remove()
    for network in client.networks.list(filters=mine_only):
        _remove_network(network)
    for volume in client.volumes.list(filters=mine_only):
        volume.remove(force=True)
    log.info(
        f"the class {deployment.name} is down: {len(mine)} containers removed; its state stays in {deployment.classdir.root}"
    )
    return len(mine)


def _sandboxes_of(client: DockerClient, owners: list[Container]) -> list[Container]:
    """The sandboxes these containers started: each is labelled with its grader's host name, a
    container's short id (``grading/sandbox/docker_sandbox.py``), and would outlive a grader removed mid-job."""
    from autograder.grading.sandbox.docker_sandbox import LABEL as SANDBOX

    hosts = {c.id[:12] for c in owners}
    found: list[Container] = client.containers.list(all=True, filters={"label": SANDBOX})
    return [box for box in found if box.labels[SANDBOX].rpartition(":")[0] in hosts]


def _remove_network(network: Any, seconds: float = 30.0) -> None:
    """An overlay network is removable once its last task has gone, which takes the swarm seconds."""
    from docker.errors import APIError

    deadline = time.monotonic() + seconds
    while True:
        try:
            network.remove()
            return
        except APIError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)
