"""A notebook cell that never ends: the whole submission times out."""

STATUS = "timeout"
EXTRA_CELL = "while True:\n    pass"
