"""A notebook from a student's hands, read whatever it holds, and the code the sandbox runs from it.

A notebook that cannot be graded is a one-line reason on that student's row (``NotebookError``),
never an exception that stops a class. Its bytes are read once, from a regular file (never through
a link, which could point at a classmate's work or the host's files) and capped in size; then
decoded as UTF-8, parsed by nbformat (any version, converted to 4) and held to the shape the grader
reads: cells with text sources and mapping metadata, nbgrader's fields of the types nbgrader
writes. nbformat's own schema is not demanded: what it frowns on but the grader can read is graded.

Locked cells come back from the source, as nbgrader restores them; test cells are left out, since
the grader judges the functions itself and hidden tests never enter the sandbox.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import nbformat

from ...core import files
from ...core.errors import JaxcourseError
from ...core.protocol import Cell

MAX_NOTEBOOK_BYTES = 20 << 20
AGAIN = "open it in Jupyter, save it and submit again"
CELL_TYPES = ("code", "markdown", "raw")
# nbgrader's cell metadata, as nbgrader writes it (nbgrader/nbgraderformat): what the grader reads.
NBGRADER_FIELDS: dict[str, tuple[type, ...]] = {
    "grade_id": (str,),
    "grade": (bool,),
    "solution": (bool,),
    "locked": (bool,),
    "task": (bool,),
    "points": (int, float),
    "schema_version": (int,),
}


class NotebookError(JaxcourseError):
    """A notebook that cannot be graded: missing, not a file, too big, not a notebook, or for
    another assignment. The message is one line that says what to do."""


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path``, or ``NotebookError``."""
    return parse(read_bytes(path), path.name)


def gradable(path: Path) -> bytes:
    """The bytes of the notebook at ``path`` where they parse as a notebook the grader reads
    (what goes on the queue), or ``NotebookError``."""
    data = read_bytes(path)
    parse(data, path.name)
    return data


def read_bytes(path: Path) -> bytes:
    """The notebook file's bytes: a regular file under ``MAX_NOTEBOOK_BYTES``, never a link."""
    try:
        return files.read_regular(path, MAX_NOTEBOOK_BYTES)
    except FileNotFoundError:
        raise NotebookError(f"no notebook at {path}") from None
    except files.NotRegular:
        raise NotebookError(
            f"{path.name} is not a notebook file (a link, a folder or a device): submit the .ipynb file itself"
        ) from None
    except files.TooLarge:
        raise NotebookError(
            f"{path.name} is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: clear its outputs "
            "(Edit > Clear Outputs of All Cells), save and submit again"
        ) from None


def parse(data: bytes, name: str) -> nbformat.NotebookNode:
    """``data`` as a version-4 notebook of the shape the grader reads, or ``NotebookError``.
    nbformat is imported on first use: a notebook's ``from autograder.checks import check``
    needs it only when a notebook is read."""
    # jsonschema, which nbformat validates with, builds a parser for IRIs (rfc3987-syntax) when it
    # is imported: a second per process, for a string format no notebook field has. Without it,
    # jsonschema leaves that one format unchecked, as it does for every format it has no parser for.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None makes its import fail
    import nbformat

    text = _submitted_text(data, name)
    try:
        nb: nbformat.NotebookNode = nbformat.reads(text, as_version=4)
    except Exception as err:  # nbformat raises many kinds for what is not a notebook of a known version
        raise NotebookError(f"{name} is not a readable notebook ({type(err).__name__}): {AGAIN}") from None
    _refuse_shape(nb, name, joined=True)
    return nb


def check_submitted(data: bytes, name: str) -> None:
    """``NotebookError`` for a file no grader could read, judged without nbformat (the exchange
    refuses such a file when it is submitted): not UTF-8, not JSON, or a version-4 notebook of
    another shape. Other versions are left to ``parse``, which converts them."""
    _submitted_text(data, name)


def _submitted_text(data: bytes, name: str) -> str:
    """The notebook's text, where it is JSON and, as a version-4 notebook, of the right shape."""
    text = _text(data, name)
    value = _json(text, name)
    if isinstance(value, dict) and value.get("nbformat") == 4:
        _refuse_shape(value, name, joined=False)
    return text


def _text(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise NotebookError(f"{name} is not UTF-8 text: {AGAIN}") from None
    if not text.strip():
        raise NotebookError(f"{name} is empty: {AGAIN}")
    return text


def _json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise NotebookError(f"{name} is not a readable notebook (not JSON; cut short?): {AGAIN}") from None


def _refuse_shape(nb: Any, name: str, joined: bool) -> None:
    problem = shape_problem(nb, joined)
    if problem:
        raise NotebookError(
            f"{name} is not a notebook the grader can read: {problem}; "
            "start again from the released notebook and copy your code into it"
        )


def shape_problem(nb: Any, joined: bool = True) -> str | None:
    """What in ``nb`` is not of the shape the grader reads, in a few words, or None. ``joined``:
    as nbformat gives it, every source one text (in the file, a source may be a list of lines)."""
    if not isinstance(nb, dict) or not isinstance(nb.get("metadata", {}), dict):
        return "its metadata is not a mapping"
    ours = nb.get("metadata", {}).get("jaxcourse", {})
    if not isinstance(ours, dict) or not isinstance(ours.get("assignment", ""), str):
        return "its jaxcourse metadata is not a mapping with a text assignment"
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return "it has no list of cells"
    for number, cell in enumerate(cells, 1):
        problem = _cell_problem(cell, joined)
        if problem:
            return f"cell {number} {problem}"
    return None


def _cell_problem(cell: Any, joined: bool) -> str | None:
    if not isinstance(cell, dict):
        return "is not a mapping"
    if cell.get("cell_type") not in CELL_TYPES:
        return f"is of no known type ({str(cell.get('cell_type'))[:20]!r})"
    source = cell.get("source")
    lines = not joined and isinstance(source, list) and all(isinstance(line, str) for line in source)
    if not isinstance(source, str) and not lines:
        return "has a source that is not text"
    metadata = cell.get("metadata", {})
    if not isinstance(metadata, dict):
        return "has metadata that is not a mapping"
    nbgrader = metadata.get("nbgrader", {})
    if not isinstance(nbgrader, dict):
        return "has nbgrader metadata that is not a mapping"
    for key, kinds in NBGRADER_FIELDS.items():
        value = nbgrader.get(key)
        if key in nbgrader and (not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool))):
            return f"has an nbgrader {key} that is not {' or '.join(k.__name__ for k in kinds)}"
    return None


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
