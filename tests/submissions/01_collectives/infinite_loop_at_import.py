"""A notebook cell that never ends: the notebook's time limit stops it, so the whole submission
times out and scores nothing."""

STATUS = "timeout"
MESSAGE = "the notebook did not finish within 20 s"
EXTRA_CELL = "while True:\n    pass"
