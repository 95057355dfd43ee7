"""sys.exit(0) in a cell raises SystemExit; the runner reports it like any other exception."""

STATUS = "error"
MESSAGE = "raised SystemExit"
EXTRA_CELL = "import sys\nsys.exit(0)"
