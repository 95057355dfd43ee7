"""Every process forks for ever. The pids and memory limits cap them; which one ends the run
depends on how much memory each copy of a JAX process touches on this machine, so either is
right: the memory limit kills the container, or the time limit does."""

STATUS = ("crashed", "timeout")
MESSAGE = "ran out of memory|did not finish within"
EXTRA_CELL = """import os
while True:
    try:
        os.fork()
    except OSError:
        pass"""
