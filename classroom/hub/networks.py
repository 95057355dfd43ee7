"""Each user's server on a network of its own, which the hub's container joins, and nothing else.

The network is internal (Docker adds no way out) and its bridge holds no address of the host's
(``inhibit_ipv4``): a server can reach the hub's container (its API, its proxy, the exchange) and
nothing else, not the host through the gateway, not a classmate's server, not the queue. Docker
still writes a default route in the server's routing table, through the gateway address; no
interface holds that address, so the route leads nowhere. Each network takes a /28 from the
class's pool (``[hub] server_subnets``), chosen among those no Docker network uses.

On a swarm (``hub up --swarm``) the network is an attachable overlay instead, internal too, so
that the server may run on any node and the hub's container still joins it; an overlay has no
gateway on any host for the server to reach. It is encrypted (IPsec) where the kernel can.

Called from the hub's configuration (``docker/hub/jupyterhub_config.py``) before a server
starts and after it stops.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from autograder.core.errors import JaxcourseError

if TYPE_CHECKING:
    from docker.client import DockerClient

PREFIX = 28  # 16 addresses a network: the server, the hub, the gateway no one holds
INHIBIT = {"com.docker.network.bridge.inhibit_ipv4": "true"}
USER_LABEL = "jaxcourse.user"


class NetworkError(JaxcourseError):
    """No subnet is left in the class's pool: the message says which setting to widen."""


def attach(
    client: DockerClient,
    name: str,
    hub: str,
    labels: dict[str, str],
    pool: str,
    user: str,
    overlay: bool = False,
    encrypted: bool = False,
) -> str:
    """The network ``name`` of ``user``'s server, made when missing (an overlay, ``encrypted``
    when asked, or a bridge), with the hub's container in it."""
    from docker.types import IPAMConfig, IPAMPool

    network = _named(client, name)
    if network is None:
        ipam = IPAMConfig(pool_configs=[IPAMPool(subnet=free_subnet(client, pool))])
        kind = {"driver": "overlay", "attachable": True, "options": {"encrypted": ""} if encrypted else {}}
        kind = kind if overlay else {"driver": "bridge", "options": INHIBIT}
        network = client.networks.create(name, internal=True, ipam=ipam, labels={**labels, USER_LABEL: user}, **kind)
    if not has(network, hub):
        network.connect(hub)
    return name


def has(network: Any, container: str) -> bool:
    """Whether the container named ``container`` is in ``network``, by the network's own endpoint
    list: an overlay's also holds a load balancer that is no container, on which docker-py's
    ``Network.containers`` fails looking it up."""
    network.reload()
    return container in {end.get("Name") for end in (network.attrs.get("Containers") or {}).values()}


def detach(client: DockerClient, name: str, hub: str) -> None:
    """The hub's container leaves ``name`` and the network goes (its server has stopped)."""
    from docker.errors import APIError

    network = _named(client, name)
    if network is None:
        return
    try:
        network.disconnect(hub, force=True)
        network.remove()
    except APIError:  # still in use (a server starting again): it stays, and is used again
        pass


def free_subnet(client: DockerClient, pool: str) -> str:
    """The first /28 of ``pool`` that overlaps no Docker network's subnet."""
    used = [
        ipaddress.ip_network(config["Subnet"], strict=False)
        for network in client.networks.list()
        for config in (network.attrs.get("IPAM") or {}).get("Config") or []
        if config.get("Subnet") and ":" not in config["Subnet"]
    ]
    for candidate in ipaddress.ip_network(pool).subnets(new_prefix=PREFIX):
        if not any(candidate.overlaps(u) for u in used):
            return str(candidate)
    raise NetworkError(f"no /{PREFIX} is left in {pool} for another server: widen [hub] server_subnets")


def _named(client: DockerClient, name: str) -> Any:
    """The network called exactly ``name`` (Docker's filter also matches names that contain it)."""
    return next((n for n in client.networks.list(names=[name]) if n.name == name), None)
