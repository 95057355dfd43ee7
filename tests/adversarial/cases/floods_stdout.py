"""Prints 100 MB. The container keeps only the last megabyte of output, the grader reads only a
tail of that, and the notebook is graded as usual: full marks."""

EXPECTED = {}
EXTRA_CELL = """import sys
line = "x" * (1 << 20) + "\\n"
for _ in range(100):
    sys.stdout.write(line)"""
