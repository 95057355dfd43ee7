"""Grading limits, per assignment, from the course config ``jaxcourse.toml``.

``[sandbox]`` sets them for every assignment and ``[assignments.<name>.sandbox]`` overrides them
for one, so an assignment that trains a model can have more memory and time than one that moves
a few blocks around.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..core.config import layered
from ..core.errors import JaxcourseError

_MEMORY = re.compile(r"^\d+(\.\d+)?[kmg]$")


class LimitsError(JaxcourseError):
    """The course config cannot be read or holds a value that cannot be a limit."""


@dataclass(frozen=True)
class Limits:
    """What one submission may use. Defaults fit JAX on 8 simulated CPU devices: importing JAX
    and compiling a few dozen small programs needs about 1 GB and a core."""

    memory: str = "2g"  # the container's memory; swap is set equal, so it cannot page around it
    cpus: float = 1.0  # CPU quota of one container
    pids: int = 1024  # processes and threads: XLA starts a thread pool per device
    tmpfs: str = "256m"  # /tmp and the home directory, the only writable places
    timeout: float = 300.0  # seconds for one submission's cells and exports
    test_timeout: float = 60.0  # seconds for one export, or one run when measured

    def default_jobs(self, cores: int | None = None) -> int:
        """As many containers at once as their CPU quotas fit on this machine's cores."""
        return max(1, int((cores or os.cpu_count() or 1) // self.cpus))


def load(root: Path, assignment: str) -> Limits:
    """The limits for ``assignment``: the defaults, then ``[sandbox]``, then the assignment's own."""
    limits = Limits()
    for table, where in layered(root, "sandbox", assignment):
        limits = _apply(limits, table, where)
    return limits


def _apply(limits: Limits, table: dict[str, Any], where: str) -> Limits:
    known = {f.name: f.type for f in fields(Limits)}
    unknown = set(table) - set(known)
    if unknown:
        raise LimitsError(f"{where}: unknown limit {sorted(unknown)[0]!r}; known: {', '.join(known)}")
    for name, value in table.items():
        _check(name, value, where)
    return replace(limits, **table)


def _check(name: str, value: Any, where: str) -> None:
    if name in ("memory", "tmpfs"):
        ok = isinstance(value, str) and bool(_MEMORY.match(value.lower()))
        need = 'a size such as "2g" or "512m"'
    elif name == "pids":
        ok, need = (
            isinstance(value, int) and not isinstance(value, bool) and value >= 16,
            "a whole number of at least 16",
        )
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
        need = "a positive number"
    if not ok:
        raise LimitsError(f"{where}: {name} = {value!r} must be {need}")
