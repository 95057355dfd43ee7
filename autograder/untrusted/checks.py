"""The sandbox's stand-in for ``autograder.checks``: a notebook's setup cell imports ``check``
and a student may call it anywhere, but inside the sandbox it judges nothing. The grader judges
the functions itself, on the trusted side, which is not in the sandbox to be called."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import JaxcourseError


class CheckFailed(JaxcourseError, AssertionError):
    """As in ``autograder.checks``; raised in the sandbox only by ``probe``."""


def check(fn: Callable[..., Any], **options: Any) -> None:
    """Nothing to do here: the grader measures ``fn`` from what the sandbox exports."""


def probe(fn: Callable[..., Any], **options: Any) -> Any:
    """Nothing is measured in the sandbox: a notebook's ``measure`` cell prints this and goes on."""
    raise CheckFailed("programs are measured by the grader, not inside its sandbox")
