"""Submissions: find them in nbgrader's layout, read their notebooks safely and rebuild the code
the sandbox runs.

Locked cells come back from the source, as nbgrader restores them; test cells are left out, since
the grader judges the functions itself and hidden tests never enter the sandbox.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import nbformat

from ..core.errors import JaxcourseError
from ..core.protocol import Cell

MAX_NOTEBOOK_BYTES = 20 << 20


class NotebookError(JaxcourseError):
    """A notebook that cannot be graded: missing, corrupt, too big or for another assignment."""


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path``, validated by nbformat; imported here, on first read, since a
    notebook's ``from autograder.checks import check`` needs it only when a notebook is read."""
    # jsonschema, which nbformat validates with, builds a parser for IRIs (rfc3987-syntax) when it
    # is imported: a second per process, for a string format no notebook field has. Without it,
    # jsonschema leaves that one format unchecked, as it does for every format it has no parser for.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None makes its import fail
    import nbformat

    if not path.is_file():
        raise NotebookError(f"no notebook at {path}")
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"{path.name} is larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
    try:
        nb: nbformat.NotebookNode = nbformat.read(str(path), as_version=4)
        return nb
    except Exception as err:  # nbformat raises many kinds for corrupt JSON or schema errors
        raise NotebookError(f"{path.name} is not a readable notebook ({type(err).__name__})") from None


def assignment_of(nb: nbformat.NotebookNode) -> str | None:
    """The assignment named in the notebook's metadata, if it says."""
    assignment: str | None = nb.metadata.get("jaxcourse", {}).get("assignment")
    return assignment


def _nbgrader(cell: Any) -> dict[str, Any]:
    meta: dict[str, Any] = cell.get("metadata", {}).get("nbgrader", {})
    return meta


def _is_test(cell: Any) -> bool:
    meta = _nbgrader(cell)
    return bool(meta.get("grade")) and not meta.get("solution")


def code_cells(submitted: nbformat.NotebookNode, source: nbformat.NotebookNode | None) -> list[Cell]:
    """The code the sandbox runs: the student's cells, locked ones restored, tests left out."""
    locked = {}
    if source is not None:
        locked = {
            _nbgrader(c)["grade_id"]: c.source
            for c in source.cells
            if c.cell_type == "code" and _nbgrader(c).get("locked") and not _is_test(c)
        }
    cells: list[Cell] = []
    for cell in submitted.cells:
        if cell.cell_type != "code" or _is_test(cell):
            continue
        grade_id = _nbgrader(cell).get("grade_id")
        cells.append({"grade_id": grade_id, "source": locked.get(grade_id, cell.source)})
    return cells


def public_cells(source: nbformat.NotebookNode) -> list[Cell]:
    """The code every student has unchanged: the source's cells that are neither a solution nor
    a test (setup, demonstrations), the part of the notebook a class shares."""
    return [
        {"grade_id": _nbgrader(c).get("grade_id"), "source": c.source}
        for c in source.cells
        if c.cell_type == "code" and not _nbgrader(c).get("solution") and not _is_test(c)
    ]


@dataclass(frozen=True)
class Submission:
    student: str
    notebook: Path
    timestamp: str | None


def find_submissions(submissions: Path, assignment: str, notebook: str) -> list[Submission]:
    """Every ``<student>/<assignment>/`` folder; a missing notebook is still a submission to report."""
    found = []
    for student_dir in sorted(p for p in submissions.iterdir() if p.is_dir()):
        folder = student_dir / assignment
        if not folder.is_dir():
            continue
        stamp = folder / "timestamp.txt"
        timestamp = stamp.read_text().strip() if stamp.is_file() else None
        found.append(Submission(student_dir.name, folder / notebook, timestamp))
    return found
