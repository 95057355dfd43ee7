"""Sleeping uses no CPU, so only a wall-clock limit ends it."""

STATUS = "timeout"
MESSAGE = "did not finish within"
EXTRA_CELL = "import time\ntime.sleep(10**9)"
