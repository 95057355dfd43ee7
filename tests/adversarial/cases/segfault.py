"""Reads address 0 through ctypes: a segmentation fault, reported by name."""

STATUS = "crashed"
MESSAGE = r"killed by signal 11 \(SIGSEGV\)"
EXTRA_CELL = "import ctypes\nctypes.string_at(0)"
