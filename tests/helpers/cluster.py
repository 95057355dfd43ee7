"""The one-machine Slurm cluster for the engine tests: started once per test session and stopped
at its end (left alone if it was up before); one session at a time uses it. Without the packages
the tests skip loudly, and under CI=true they fail."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from classroom import cluster

from .engine import engine_lock, unavailable

LOCK = Path(tempfile.gettempdir()) / "jaxcourse-cluster-tests.lock"
WHAT = "Slurm and Open MPI"


def installed() -> bool:
    return all(shutil.which(program) for program in cluster.PROGRAMS)


@contextlib.contextmanager
def session_cluster() -> Iterator[cluster.Cluster]:
    if not installed():
        unavailable(WHAT, f"not installed here: apt-get install -y {cluster.PACKAGES} (as root)")
    if os.geteuid() != 0:
        unavailable(WHAT, "the one-machine cluster runs its daemons as root")
    where = cluster.Cluster()
    with engine_lock(LOCK, "the cluster"):
        was_up = cluster.running(where) == list(cluster.DAEMONS)
        cluster.up(where)
        try:
            yield where
        finally:
            if not was_up:
                cluster.down(where)
