"""SIGKILL to its own process: no handler runs, no results."""

STATUS = "crashed"
MESSAGE = r"killed by signal 9 \(SIGKILL\)"
EXTRA_CELL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
