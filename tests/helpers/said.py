"""What the package says (its ``autograder`` loggers) inside a block, line by line: for fixtures
that outlive one test, where pytest's per-test ``caplog`` cannot reach."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def said() -> Iterator[list[str]]:
    """The lines said (info and above) while the block runs; the list stays readable after."""
    logger, handler = logging.getLogger("autograder"), _Lines()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(min(level or logging.INFO, logging.INFO))
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
