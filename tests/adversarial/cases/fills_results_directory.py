"""Writes a gigabyte into the results directory, the only host directory it can write: the
grader's watchdog stops it long before, and the results are refused."""

STATUS = "invalid"
MESSAGE = "wrote more than"
EXTRA_CELL = """import os, sys
chunk = b"x" * (16 << 20)
with open(os.path.join(sys.argv[3], "filler.bin"), "wb") as f:
    for _ in range(64):
        f.write(chunk)"""
