"""Docker Swarm: this engine as the manager, other engines joined to it as nodes.

A real class joins real hosts (``docker swarm join``, docs/swarm.md). The test swarm stands a node up as a
container running its own engine (``docker/swarm-node``): ``start_node`` runs one and joins it,
``load_image`` gives it an image without any registry, ``lose_node`` kills it as a host is lost.

What this machine's kernel allows shaped the options: no ``--privileged`` (dockerd's bounding set
lacks CAP_SYS_RESOURCE, so every capability but that one), the host's cgroup tree mounted
writable (cgroup v1: a node's containers need cgroups of their own), FUSE for the work folders'
sshfs mount, and no IPVS, so services
are reached by DNS round robin (``ENDPOINT_MODE``), never through a virtual IP or the routing mesh.
"""

from __future__ import annotations

import logging
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.core.errors import JaxcourseError
from autograder.engine.containers import kill, remove, started
from autograder.engine.images import build_image, choose_base, tar_context

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container

NODE_IMAGE = "jaxcourse-swarm-node:latest"
NODE_FILES = ("docker/swarm-node/Dockerfile", "docker/swarm-node/start.sh")
NODE_LABEL = "jaxcourse.swarm-node"  # value: the node's name, on its container and volume
ENDPOINT_MODE = "dnsrr"  # virtual IPs need IPVS, which kernels without CONFIG_IP_VS lack
SCRATCH = "/var/lib/jaxcourse-scratch"  # on every node: workers' scratch, at the same path for sandboxes
MANAGER_PORT = 2377
READY_S = 60.0


class SwarmError(JaxcourseError):
    """The swarm cannot be formed or a node cannot join it: the message says why."""


@dataclass(frozen=True)
class Join:
    """What a node needs to join: the manager's address and the swarm's worker token."""

    address: str
    token: str


@dataclass(frozen=True)
class Node:
    """A node of the test swarm: its container, and its id in the swarm."""

    container: Container
    name: str
    node_id: str

    def docker(self, *argv: str, stdin: Any = None, timeout: float = 300.0) -> str:
        """``docker ARGV`` against the node's own engine; SwarmError with its stderr if it fails."""
        return self.run("docker", *argv, stdin=stdin, timeout=timeout)

    def run(self, *argv: str, stdin: Any = None, timeout: float = 300.0) -> str:
        """``ARGV`` run as root on the node (its stdout); SwarmError with its stderr if it fails."""
        done = subprocess.run(
            ["docker", "exec", "-i", self.container.id, *argv],
            stdin=stdin,
            capture_output=True,
            text=stdin is None,
            timeout=timeout,
        )
        if done.returncode != 0:
            err = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
            raise SwarmError(f"node {self.name}: {' '.join(argv)} failed: {err.strip()[:300]}")
        out = done.stdout if isinstance(done.stdout, str) else done.stdout.decode(errors="replace")
        return out.strip()


def build_node(client: DockerClient, repo: Path) -> str:
    base = choose_base(client, None)
    context = tar_context({name: repo / name for name in NODE_FILES})
    return build_image(client, NODE_IMAGE, context, "docker/swarm-node/Dockerfile", {"BASE_IMAGE": base})


def manage(client: DockerClient, address: str) -> Join:
    """Make this engine a swarm manager advertised at ``address`` (unless it already manages one)."""
    from docker.errors import APIError

    info = client.info()["Swarm"]
    if info.get("LocalNodeState") != "active":
        try:
            client.swarm.init(advertise_addr=address, listen_addr=f"{address}:{MANAGER_PORT}")
        except APIError as err:
            raise SwarmError(f"this engine cannot start a swarm: {err.explanation}") from None
    elif not info.get("ControlAvailable"):
        raise SwarmError("this engine is a swarm worker, not a manager: run this on a manager node")
    client.swarm.reload()
    manager = client.info()["Swarm"]["RemoteManagers"][0]["Addr"]
    return Join(manager, client.swarm.attrs["JoinTokens"]["Worker"])


def esp_available() -> bool:
    """Whether this kernel can carry an encrypted overlay (IPsec ESP), as far as its config says;
    True when no config can be read (Docker's own default is to try)."""
    import gzip
    import os

    for path in ("/proc/config.gz", f"/boot/config-{os.uname().release}"):
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt") as config:
                text = config.read()
        except OSError:
            continue
        return any(line in ("CONFIG_INET_ESP=y", "CONFIG_INET_ESP=m") for line in text.splitlines())
    return True


def leave(client: DockerClient) -> None:
    """This engine leaves its swarm (a manager forcibly: the swarm ends with it)."""
    if client.info()["Swarm"].get("LocalNodeState") == "active":
        client.swarm.leave(force=True)


def node_options(name: str, network: str, binds: dict[str, str]) -> dict[str, Any]:
    """The run options of a node container (see the module's docstring for why each)."""
    volumes = {
        f"{name}-engine": {"bind": "/var/lib/docker", "mode": "rw"},
        "/sys/fs/cgroup": {"bind": "/sys/fs/cgroup", "mode": "rw"},
    }
    volumes.update({path: {"bind": path, "mode": mode} for path, mode in binds.items()})
    return {
        "image": NODE_IMAGE,
        "name": name,
        "hostname": name,
        "network": network,
        "environment": {"JAXCOURSE_NODE": name},
        "labels": {NODE_LABEL: name},
        "cap_add": ["ALL"],
        "cap_drop": ["SYS_RESOURCE"],
        "cgroupns": "host",
        "security_opt": ["seccomp=unconfined", "apparmor=unconfined"],
        "tmpfs": {"/run": "", "/tmp": ""},
        "volumes": volumes,
        "devices": ["/dev/fuse:/dev/fuse:rwm"],  # sshfs: the class's work folders (hub/homes.py)
    }


def start_node(client: DockerClient, name: str, network: str, join: Join, binds: dict[str, str]) -> Node:
    """A node container on ``network``, its engine up and joined to the swarm as a worker.
    ``binds`` ({path: "ro" | "rw"}) are host folders the node sees at the same path."""
    container = started(client, **node_options(name, network, binds))  # none left if it will not start
    node = Node(container, name, "")
    deadline = time.monotonic() + READY_S
    while True:
        try:
            node.docker("info", "--format", "{{.ServerVersion}}", timeout=10)
            break
        except (SwarmError, subprocess.TimeoutExpired) as err:
            if time.monotonic() > deadline:
                remove(container)
                raise SwarmError(f"node {name}: its engine did not start in {READY_S:.0f} s ({err})") from None
            time.sleep(0.5)
    node.docker("swarm", "join", "--token", join.token, join.address)
    return Node(container, name, node.docker("info", "--format", "{{.Swarm.NodeID}}"))


def load_image(node: Node, image: str) -> None:
    """``image`` from this engine into the node's, streamed (no registry, no file on disk)."""
    save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
    try:
        node.docker("load", stdin=save.stdout, timeout=600)
    finally:
        if save.stdout is not None:
            save.stdout.close()
        if save.wait() != 0:
            raise SwarmError(f"docker save {image} failed (exit {save.returncode})")


def lose_node(node: Node) -> None:
    """The node's host is gone: its container SIGKILLed, with everything running on it."""
    kill(node.container)


def remove_node(client: DockerClient, node: Node) -> None:
    """The node gone for good: its container and engine volume removed, and the manager forgets it."""
    from docker.errors import APIError, NotFound

    remove(node.container)
    for volume in client.volumes.list(filters={"name": f"{node.name}-engine"}):
        volume.remove(force=True)
    if node.node_id:
        try:
            client.api.remove_node(node.node_id, force=True)
        except (APIError, NotFound):
            pass  # the swarm is already gone
