"""What the packages say, as plain lines: each module logs under its package's name,
``autograder``, ``classroom`` or ``jaxcourse`` (or as ``__main__``, run with ``python -m``); a
command (the CLI, the hub's grading service, the image's entrypoint) decides once where the lines go. Other libraries' loggers are left as they are, so
JAX's own chatter stays out of a command's output."""

from __future__ import annotations

import logging
import sys
from typing import Any, Literal

# The distribution's packages (the core, the class, the command line), named, never imported;
# a module run with ``python -m`` logs under __main__.
SAID_BY = ("autograder", "classroom", "jaxcourse", "__main__")
Stream = Literal["stdout", "stderr"]


class _Std(logging.StreamHandler):  # type: ignore[type-arg]  # its stream is found when a line is said
    """Writes to ``sys.stdout`` or ``sys.stderr`` as they are when a line is said (a redirected
    or captured stream), not as they were when the command started."""

    def __init__(self, which: Stream, level: int) -> None:
        super().__init__()
        self.which = which
        self.setLevel(level)
        self.setFormatter(logging.Formatter("%(message)s"))

    @property
    def stream(self) -> Any:
        return getattr(sys, self.which)

    @stream.setter
    def stream(self, value: Any) -> None:
        """StreamHandler sets a stream of its own; this one always looks it up."""


def configure(out: Stream = "stdout") -> None:
    """Progress (info) on ``out``, the command's own output; warnings and errors on stderr; each a
    bare line, as a person reads it. Calling it again replaces the last."""
    handlers = [_Std(out, logging.INFO)]
    if out != "stderr":
        handlers[0].addFilter(lambda record: record.levelno < logging.WARNING)
        handlers.append(_Std("stderr", logging.WARNING))
    for name in SAID_BY:
        logger = logging.getLogger(name)
        logger.handlers[:] = handlers
        logger.setLevel(logging.INFO)
