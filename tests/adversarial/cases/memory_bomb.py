"""Touches memory until the container's limit: the kernel kills it, the report says why."""

STATUS = "crashed"
MESSAGE = "ran out of memory"
EXTRA_CELL = """blocks = []
while True:
    blocks.append(bytearray(64 << 20))"""
