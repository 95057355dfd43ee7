"""The test swarm: this machine's engine as the manager and two nodes, each a container running
its own engine (``engine/swarm.py``), on a bridge network of the test's own; the nodes' images
come from the class's registry, or are loaded by a test. Built once per session and shared; everything it made is removed after, and what a
killed session left is cleared first."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from classroom import swarm

from .course import REPO

if TYPE_CHECKING:
    from docker.client import DockerClient

NETWORK = "jaxcourse-test-swarm"
SWARM_LABEL = "jaxcourse.test-swarm"  # on the swarm this helper made, so it only ever leaves its own
NODES = ("jaxcourse-node-1", "jaxcourse-node-2")


@dataclass(frozen=True)
class LocalSwarm:
    client: DockerClient
    network: str  # the bridge the nodes and the manager share; the host reaches containers on it
    nodes: tuple[swarm.Node, ...]


@contextlib.contextmanager
def local_swarm(client: DockerClient, shared: Path) -> Iterator[LocalSwarm]:
    """The swarm, with ``shared`` (a host folder) on every node at the same path, read-only: the
    course checkouts the tests make live there."""
    clear(client)
    if client.info()["Swarm"].get("LocalNodeState") == "active":
        raise RuntimeError(
            "this Docker engine is already in a swarm the tests did not make: "
            "the swarm tests need an engine outside any swarm"
        )
    swarm.build_node(client, REPO)
    network = client.networks.create(NETWORK, driver="bridge", labels={SWARM_LABEL: "yes"})
    network.reload()
    gateway = network.attrs["IPAM"]["Config"][0]["Gateway"]
    join = swarm.manage(client, gateway)
    client.swarm.update(labels={SWARM_LABEL: "yes"})
    nodes: list[swarm.Node] = []
    try:
        for name in NODES:
            nodes.append(swarm.start_node(client, name, NETWORK, join, {str(shared): "ro"}))
        yield LocalSwarm(client, NETWORK, tuple(nodes))
    finally:
        clear(client)


def restore(client: DockerClient, node: swarm.Node, seconds: float = 120.0) -> None:
    """A lost node back, as a host that reboots: its container started again, its engine (its
    images and its swarm identity kept in its volume) rejoins by itself."""
    import time

    node.container.start()
    deadline = time.monotonic() + seconds
    while client.nodes.get(node.node_id).attrs["Status"]["State"] != "ready":
        if time.monotonic() > deadline:
            raise AssertionError(f"node {node.name} did not rejoin the swarm in {seconds:g} s")
        time.sleep(1.0)


def clear(client: DockerClient) -> None:
    """Leave a swarm this helper made, and remove its nodes and network."""
    from autograder.engine.containers import remove

    info = client.info()["Swarm"]
    if info.get("LocalNodeState") == "active" and info.get("ControlAvailable"):
        client.swarm.reload()
        if (client.swarm.attrs.get("Spec", {}).get("Labels") or {}).get(SWARM_LABEL) == "yes":
            for service in client.services.list():
                service.remove()
            swarm.leave(client)
    for container in client.containers.list(all=True, filters={"label": swarm.NODE_LABEL}):
        remove(container)
    for volume in client.volumes.list(filters={"label": swarm.NODE_LABEL}):
        volume.remove(force=True)
    for name in NODES:
        for volume in client.volumes.list(filters={"name": f"{name}-engine"}):
            volume.remove(force=True)
    for net in client.networks.list(names=[NETWORK]):
        net.remove()
