"""Tries to rewrite what the grader handed it (its own cells, the plan) and the course's files.
Every write must fail; the test also checks that the submission on disk is unchanged."""

EXPECTED = {}
EXTRA_CELL = """import os, sys
written = []
for path in [sys.argv[1], sys.argv[2], "{notebook}", "/opt/grader/autograder/untrusted/runner.py", "/usr/lib/python3.11/os.py"]:
    try:
        with open(path, "a") as f:
            f.write("# changed by the student")
        written.append(path)
    except OSError:
        pass
if written:
    raise RuntimeError(f"wrote {written}")"""
