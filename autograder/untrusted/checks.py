"""The sandbox's stand-in for ``autograder.checks``: a notebook's setup cell imports ``check``
and a student may call it anywhere, but inside the sandbox it judges nothing. The grader judges
the functions itself, on the trusted side, which is not in the sandbox to be called."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import JaxcourseError


class CheckFailed(JaxcourseError, AssertionError):
    """As in ``autograder.checks``; never raised in the sandbox."""


def check(fn: Callable[..., Any], *, hidden: bool = False) -> None:
    """Nothing to do here: the grader measures ``fn`` from what the sandbox exports."""
