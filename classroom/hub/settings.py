"""The class deployment's settings, from the course config ``jaxcourse.toml``'s ``[hub]`` table:
what each student's server may use, when idle servers are stopped, how many grading workers.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from autograder.core import config
from autograder.core.errors import JaxcourseError


class SettingsError(JaxcourseError):
    """A [hub] setting that cannot be used: the message names it and what it must be."""


@dataclass(frozen=True)
class HubSettings:
    memory: str = "4g"  # each student's server; swap is set equal
    # Across a swarm, memory each student's server holds its node to: Swarm places a server only on
    # a node whose reservations leave this much, so a full node is passed over. An idle server's
    # share (140 MiB measured, benchmarks/class_hub.py); more if students compute at once.
    memory_reserved: str = "160m"
    cpus: float = 2.0  # each student's server
    pids: int = 2048  # each student's server
    idle_timeout: int = 3600  # seconds before an idle server is stopped (its work is kept)
    workers: int = 1  # grading workers: containers on this host, or with --swarm tasks on the grading nodes
    hub_memory: str = "2g"  # the hub's own container: JupyterHub, its proxy and the exchange
    server_subnets: str = "10.213.0.0/16"  # each server's network takes a /28 of it (4096 servers)
    work_quota: str = "10g"  # each user's work folder, at most (hub/quota.py)
    quota_every: float = 60.0  # seconds between looks at the work folders
    scratch: str = "1g"  # each server's home and /tmp, in memory: its root is read-only
    worker_concurrency: int = 0  # submissions each worker grades at once; 0: cores over the CPU quota


def _subnet(value: object) -> bool:
    try:
        return isinstance(value, str) and ipaddress.IPv4Network(value).prefixlen <= 28
    except ValueError:
        return False


RULES = {
    "memory": config.size("4g"),
    "memory_reserved": config.size("160m"),
    "cpus": config.POSITIVE,
    "pids": config.whole(1),
    "idle_timeout": config.whole(1),
    "workers": config.whole(1),
    "hub_memory": config.size("4g"),
    "server_subnets": config.Rule(_subnet, 'an IPv4 network such as "10.213.0.0/16", /28 or wider'),
    "work_quota": config.size("4g"),
    "quota_every": config.POSITIVE,
    "scratch": config.size("4g"),
    "worker_concurrency": config.Rule(config.whole(0).ok, "a whole number, 0 for automatic"),
}


def load(root: Path) -> HubSettings:
    return config.load(HubSettings(), RULES, root, "hub", "", SettingsError, key="setting")
