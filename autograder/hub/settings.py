"""The class deployment's settings, from the course config ``jaxcourse.toml``'s ``[hub]`` table:
what each student's server may use, when idle servers are stopped, how many grading workers.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..core.config import layered
from ..core.errors import JaxcourseError

_MEMORY = re.compile(r"^\d+(\.\d+)?[kmg]$")


class SettingsError(JaxcourseError):
    """A [hub] setting that cannot be used: the message names it and what it must be."""


@dataclass(frozen=True)
class HubSettings:
    memory: str = "4g"  # each student's server; swap is set equal
    cpus: float = 2.0  # each student's server
    pids: int = 2048  # each student's server
    idle_timeout: int = 3600  # seconds before an idle server is stopped (its work is kept)
    workers: int = 1  # grading worker containers on this host
    hub_memory: str = "2g"  # the hub's own container: JupyterHub, its proxy and the exchange
    server_subnets: str = "10.213.0.0/16"  # each server's network takes a /28 of it (4096 servers)
    work_quota: str = "10g"  # each user's work folder, at most (hub/quota.py)
    quota_every: float = 60.0  # seconds between looks at the work folders
    scratch: str = "1g"  # each server's home and /tmp, in memory: its root is read-only
    worker_concurrency: int = 0  # submissions each worker grades at once; 0: cores over the CPU quota


def load(root: Path) -> HubSettings:
    table, where = layered(root, "hub", "")[0]
    known = {f.name for f in fields(HubSettings)}
    for name, value in table.items():
        if name not in known:
            raise SettingsError(f"{where}: unknown setting {name!r}; known: {', '.join(sorted(known))}")
        _check(name, value, where)
    return replace(HubSettings(), **table)


def _subnet(value: Any) -> bool:
    try:
        return isinstance(value, str) and ipaddress.IPv4Network(value).prefixlen <= 28
    except ValueError:
        return False


def _check(name: str, value: Any, where: str) -> None:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in ("memory", "hub_memory", "work_quota", "scratch"):
        ok, need = isinstance(value, str) and bool(_MEMORY.match(value.lower())), 'a size such as "4g"'
    elif name in ("pids", "idle_timeout", "workers"):
        ok, need = isinstance(value, int) and not isinstance(value, bool) and value >= 1, "a whole number of at least 1"
    elif name == "worker_concurrency":
        ok, need = (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0,
            "a whole number, 0 for automatic",
        )
    elif name == "server_subnets":
        ok, need = _subnet(value), 'an IPv4 network such as "10.213.0.0/16", /28 or wider'
    else:
        ok, need = number and value > 0, "a positive number"
    if not ok:
        raise SettingsError(f"{where}: {name} = {value!r} must be {need}")
