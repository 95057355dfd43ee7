"""What the packages say (their ``autograder``, ``classroom`` and ``jaxcourse`` loggers) inside a block, line by line: for fixtures
that outlive one test, where pytest's per-test ``caplog`` cannot reach."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from autograder.core import logs


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def said() -> Iterator[list[str]]:
    """The lines said (info and above) while the block runs; the list stays readable after."""
    handler = _Lines()
    loggers = [logging.getLogger(name) for name in logs.SAID_BY if name != "__main__"]
    levels = [logger.level for logger in loggers]
    for logger, level in zip(loggers, levels):
        logger.addHandler(handler)
        logger.setLevel(min(level or logging.INFO, logging.INFO))
    try:
        yield handler.lines
    finally:
        for logger, level in zip(loggers, levels):
            logger.removeHandler(handler)
            logger.setLevel(level)
