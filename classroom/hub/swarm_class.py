"""``hub up --swarm``: the class across the Docker Swarm this engine manages. Redis and the grading
service are Swarm services pinned to the manager, grading workers a service on the nodes labelled
``jaxcourse.grade=yes`` (``swarm_queue.py``); students' servers are Swarm services on those
labelled ``jaxcourse.lab=yes`` (``docker/hub/jupyterhub_config.py``), with their work folders
over sshfs (``homes.py``). The hub, the work folders' server and the image registry
(``registry.py``) stay containers on the manager: each publishes a port on one address, which a
Swarm service cannot (its ports bind every interface)."""

from __future__ import annotations

import logging
import shlex
from typing import TYPE_CHECKING

from autograder.core.files import write_atomic
from classroom import environment, swarm

from . import deploy, homes, registry, swarm_queue
from .images import build_homes

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient


def publish(client: DockerClient, deployment: deploy.Deployment, images: list[str]) -> dict[str, str]:
    """The images in the class's registry on this manager, which the nodes pull from."""
    return registry.publish(client, deployment, images, swarm_queue.manager_address(client))


def prepare_hub(client: DockerClient, deployment: deploy.Deployment, images: deploy.ClassImages) -> dict[str, str]:
    """The work folders' SFTP server on the manager's swarm address; what a node runs to mount
    them; and the hub's environment that makes students' servers Swarm services, running the
    student image by the name the nodes pull it by. That name is in a file the hub reads at each
    spawn, so that servers started after an upgrade run the image just pushed, with no new hub."""
    address = swarm_queue.manager_address(client)
    made = homes.keys(deployment.classdir.root / "secrets", address)
    build_homes(client, deploy.source_repo())
    options = homes.server_options(deployment.classdir.root / "home", made, address, homes.PORT, deployment.labels)
    deploy.start(client, f"{deployment.name}-homes", None, renew=True, **options)
    log.info(
        f"on each node labelled {homes.LAB_LABEL}=yes, with {made.folder} copied to the same path, run as root: "
        f"{shlex.join(homes.mount_command(deployment.name, address, made))}"
    )
    encrypted = swarm.esp_available()
    if not encrypted:
        log.info(
            "students' server networks are not encrypted: this kernel has no IPsec ESP (CONFIG_INET_ESP); the hub's "
            "own TLS still protects a server's traffic with the hub, the proxy and the exchange"
        )
    named = deployment.classdir.root / "hub" / "node-image"
    write_atomic(named, images.for_nodes(images.student) + "\n")
    return {
        environment.SWARM_HOMES: homes.mount_point(deployment.name),
        environment.NODE_IMAGE_FILE: str(named),
        environment.SWARM_ENCRYPTED: "1" if encrypted else "",
    }


ACROSS_THE_SWARM = deploy.Placement(publish, swarm_queue.start, prepare_hub)
