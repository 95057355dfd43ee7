"""The local sandbox's runner, warm: the core's fork server (``core/forkserver.py``) with JAX
imported once, forking a child that runs ``runner.main`` for each submission, as a cold
``python -m autograder.untrusted.runner`` would. It serves ``ProcessSandbox``, where the code is
one's own; a container's lane forks its own way, each child a user of its own (``lane.py``).

    python -m autograder.untrusted.forkserver
"""

from __future__ import annotations

import os
import sys

from ..core import forkserver
from ..core.quick_compile import runner_flags
from .runner import WARM_IF_INSTALLED, WARM_IMPORTS

ENTRY = "autograder.untrusted.runner"


def main() -> int:
    os.environ["XLA_FLAGS"] = runner_flags()  # as the runner sets them, before its JAX is imported
    return forkserver.run(WARM_IMPORTS, ENTRY, "the warm runner", WARM_IF_INSTALLED)


if __name__ == "__main__":
    sys.exit(main())
