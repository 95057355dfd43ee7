"""The first stage of one submission's grading (``stages.py`` declares them all, in order): the
notebook read and fingerprinted, its bytes read once so that the fingerprint is of what is
graded. A notebook no grader can read, or another assignment's, stops here as invalid."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..submission import notebooks as nbio
from .handoff import Grading, Notebook, Setup, Stop, Submitted


def read(grading: Grading, submitted: Submitted) -> Notebook:
    """The notebook, its fingerprint kept for the report whatever follows."""
    grading.fingerprint, nb = fingerprinted(grading.setup, submitted.notebook)
    if isinstance(nb, nbio.NotebookError):
        raise Stop("invalid", str(nb))
    return Notebook(nb)


def fingerprinted(setup: Setup, notebook: Path) -> tuple[str, Any]:
    """The fingerprint, and the notebook or the ``NotebookError`` that says why it cannot be
    graded; its bytes are read once, so the fingerprint is of what is graded."""
    try:
        data = nbio.read_bytes(notebook)
    except nbio.NotebookError as err:
        return _fingerprint(setup, f"unreadable: {err}".encode()), err
    fingerprint = _fingerprint(setup, data)
    try:
        nb = nbio.parse(data, notebook.name)
    except nbio.NotebookError as err:
        return fingerprint, err
    named = nbio.assignment_of(nb)
    if named is not None and named != setup.assignment.name:
        return fingerprint, nbio.NotebookError(f"{notebook.name} is for {named[:80]}, not {setup.assignment.name}")
    return fingerprint, nb


def _fingerprint(setup: Setup, data: bytes) -> str:
    digest = hashlib.sha256(setup.fingerprint_base.encode())
    digest.update(data)
    return digest.hexdigest()
