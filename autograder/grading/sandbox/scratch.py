"""A submission's scratch folder (its job, its results, the grader's copies), removed however its
grading ends, whatever the sandbox left in it, and never with an exception: one student's
leftovers are said, not a class's end."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .sandbox import Sandbox

log = logging.getLogger(__name__)


@contextlib.contextmanager
def scratch(prefix: str, sandbox: Sandbox) -> Iterator[Path]:
    """The sandbox's workspace for one submission (on a lane, where one is free)."""
    path = sandbox.workspace(prefix)
    try:
        yield path
    finally:
        sandbox.release(path)
        clear(path, sandbox)


def clear(path: Path, sandbox: Sandbox) -> None:
    """Remove ``path``: folders the sandbox locked are opened first; what the grader's own user
    still cannot remove (another user's files) the sandbox removes its own way; what stays even
    then is said (a warning)."""
    shutil.rmtree(path, onerror=_opened_and_again)
    if path.exists():
        with contextlib.suppress(Exception):  # the sandbox's own way may fail too: say, go on
            sandbox.clear(path)
        shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        log.warning(f"jaxcourse: could not remove {path}: remove it by hand")


def _opened_and_again(function: Any, name: str, error: Any) -> None:
    """rmtree's retry: the entry's folder (and the entry, if a folder) made writable, then once more."""
    with contextlib.suppress(OSError):
        for folder in {os.path.dirname(name), name}:
            if os.path.isdir(folder) and not os.path.islink(folder):
                os.chmod(folder, stat.S_IRWXU)
        function(name)
