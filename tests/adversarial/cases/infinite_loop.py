"""A cell that never ends: the notebook's time limit stops it, the container goes with it."""

STATUS = "timeout"
MESSAGE = "did not finish within"
EXTRA_CELL = "while True:\n    pass"
