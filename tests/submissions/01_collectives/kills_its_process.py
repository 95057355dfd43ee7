"""A notebook that kills its own process with os._exit(9) before writing any results: the whole
submission crashed, and the message gives the exit status."""

STATUS = "crashed"
MESSAGE = "the notebook's process exited with status 9"
EXTRA_CELL = "import os\nos._exit(9)"
