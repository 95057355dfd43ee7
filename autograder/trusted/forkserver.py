"""The trusted worker, warm: the core's fork server (``core/forkserver.py``) with JAX and the
judges imported once, forking a child that runs ``job_process.main`` for each job.

    python -m autograder.trusted.forkserver
"""

from __future__ import annotations

import sys

from ..core import forkserver

# What a job imports, imported once here: JAX, and the judges with everything they import.
WARM = (
    "jax",
    "jax.numpy",
    "jax.export",
    "jax.monitoring",
    "numpy",
    "cloudpickle",
    "scipy.linalg",
    "autograder.trusted.judges",
    "autograder.specs",
)
ENTRY = "autograder.trusted.job_process"


def main() -> int:
    return forkserver.run(WARM, ENTRY, "the warm trusted worker")


if __name__ == "__main__":
    sys.exit(main())
