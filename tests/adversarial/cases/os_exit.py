"""os._exit(0) ends the process at once, successfully, with no results written."""

STATUS = "crashed"
MESSAGE = "exited before writing its results"
EXTRA_CELL = "import os\nos._exit(0)"
