"""The ``jaxcourse`` command: argument parsing only, one module per command, over the grader's
core (``autograder``) and the class (``classroom``). Defaults come from the Python API, so the two
never drift."""

from .app import main

__all__ = ["main"]
