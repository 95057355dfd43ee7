"""What the Docker tests need from the machine: under CI=true its absence is a failure."""

from __future__ import annotations

import os
import warnings

import pytest

IN_CI = os.environ.get("CI") == "true"


def unavailable(what: str, reason: str) -> None:
    """Fail under CI; elsewhere skip, loudly (a warning and the skip reason in the summary)."""
    if IN_CI:
        pytest.fail(f"CI=true requires {what}: {reason}", pytrace=False)
    warnings.warn(f"docker tests skipped: {what} unavailable: {reason}", stacklevel=2)
    pytest.skip(f"{what} unavailable: {reason}")
