"""The ``jaxcourse`` command: argument parsing only, one module per command. Defaults come from
the Python API, so the two never drift."""

from .app import main

__all__ = ["main"]
