"""Argument types and defaults shared by the commands."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, not a usage dump: say what is wrong and where to look."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def share(text: str) -> float:
    """A share between 0 and 1, such as a similarity threshold: anything else would list every
    pair or none, silently."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a share above 0 and at most 1, such as 0.5")
    return value


def port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"port {text!r} is not a number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is outside 1-65535")
    return value


def broker_url(text: str) -> str:
    """A Redis URL for the grading queue (its password is never echoed back)."""
    from classroom.queue.app import BrokerError, check_url

    try:
        return check_url(text)
    except BrokerError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def class_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--class DIR``, the class directory a command works on, as ``args.class_dir``."""
    parser.add_argument("--class", dest="class_dir", type=Path, help=help)


def default(fn: Callable[..., Any], name: str) -> Any:
    """A parameter's default in the Python API: the command line takes it from there."""
    return inspect.signature(fn).parameters[name].default


if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[Parser]  # generic only to the type checker
else:
    Subparsers = argparse._SubParsersAction
