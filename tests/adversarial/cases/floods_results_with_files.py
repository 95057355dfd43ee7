"""Writes empty files into the results directory, the only host directory it can write, as fast as
it can (a million, if let), after a folder it locks (mode 0) for the grader to trip over: the
watchdog counts entries as well as bytes and stops it, its results are refused, and its folder is
cleared with the rest; the class goes on."""

STATUS = "invalid"
MESSAGE = "wrote more than 64 files into its results directory"
EXTRA_CELL = """import os, sys
out = sys.argv[3]
locked = os.path.join(out, "locked")
os.mkdir(locked)
open(os.path.join(locked, "inside"), "w").close()
os.chmod(locked, 0)
for number in range(1_000_000):
    open(os.path.join(out, f"empty{number}"), "w").close()"""
