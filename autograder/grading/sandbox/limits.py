"""Grading limits, per assignment, from the course config ``jaxcourse.toml``.

``[sandbox]`` sets them for every assignment and ``[assignments.<name>.sandbox]`` overrides them
for one, so an assignment that trains a model can have more memory and time than one that moves
a few blocks around.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...core import config
from ...core.errors import JaxcourseError


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


RULES = {
    "memory": config.size("2g"),
    "cpus": config.POSITIVE,
    "pids": config.whole(16),
    "tmpfs": config.size("256m"),
    "timeout": config.POSITIVE,
    "test_timeout": config.POSITIVE,
}


def load(root: Path, assignment: str) -> Limits:
    """The limits for ``assignment``: the defaults, then ``[sandbox]``, then the assignment's own."""
    return config.load(Limits(), RULES, root, "sandbox", assignment, LimitsError, key="limit")
