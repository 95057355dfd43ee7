"""Notebooks no grader can read, one of each kind a careless or hostile student could hand in,
each with the words its one-line reason must hold. The class tests, ``jaxcourse check``, the
grading service and the reader's own tests share them."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from autograder.grading.submission.notebooks import MAX_NOTEBOOK_BYTES


@dataclass(frozen=True)
class Malformed:
    name: str
    reason: str  # words the one-line reason must hold
    write: Callable[[Path, nbformat.NotebookNode], None]  # (where the notebook goes, a good one)


def _json(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path, nbformat.NotebookNode], None]:
    """A writer of the good notebook's JSON after ``edit`` (to its first code cell, as a dict)."""

    def write(path: Path, good: nbformat.NotebookNode) -> None:
        data = json.loads(nbformat.writes(good))
        edit(next(c for c in data["cells"] if c["cell_type"] == "code"))
        path.write_text(json.dumps(data))

    return write


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(cell: dict[str, Any]) -> None:
        cell[key] = value

    return edit


def _nbgrader(value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(cell: dict[str, Any]) -> None:
        cell["metadata"]["nbgrader"] = value

    return edit


def _huge(path: Path, good: nbformat.NotebookNode) -> None:
    """A notebook whose one output is over the size limit: a student who printed too much."""
    nb = nbformat.from_dict(json.loads(nbformat.writes(good)))
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * (MAX_NOTEBOOK_BYTES + 1))]
    nbformat.write(nb, path)


def _link(path: Path, good: nbformat.NotebookNode) -> None:
    """A link to a good notebook elsewhere (a classmate's, say) in place of one's own."""
    target = path.parent.parent / "elsewhere.ipynb"
    nbformat.write(good, target)
    os.symlink(target, path)


def _text(data: bytes) -> Callable[[Path, nbformat.NotebookNode], None]:
    def write(path: Path, good: nbformat.NotebookNode) -> None:
        path.write_bytes(data)

    return write


def _utf16(path: Path, good: nbformat.NotebookNode) -> None:
    path.write_bytes(nbformat.writes(good).encode("utf-16"))


def _truncated(path: Path, good: nbformat.NotebookNode) -> None:
    text = nbformat.writes(good)
    path.write_text(text[: len(text) // 2])


def _folder(path: Path, good: nbformat.NotebookNode) -> None:
    path.mkdir()
    nbformat.write(good, path / "inside.ipynb")


def _future(path: Path, good: nbformat.NotebookNode) -> None:
    data = json.loads(nbformat.writes(good))
    data["nbformat"] = 9
    path.write_text(json.dumps(data))


def _cells_not_a_list(path: Path, good: nbformat.NotebookNode) -> None:
    data = json.loads(nbformat.writes(good))
    data["cells"] = {"0": data["cells"][0]}
    path.write_text(json.dumps(data))


KINDS = (
    Malformed("empty", "is empty", _text(b"")),
    Malformed("not_json", "not JSON; cut short?", _text(b"print('my answer')\n")),
    Malformed("truncated", "not JSON; cut short?", _truncated),
    Malformed("not_utf8", "is not UTF-8 text", _utf16),
    Malformed("unknown_version", "is not a readable notebook", _future),
    Malformed("cells_not_a_list", "it has no list of cells", _cells_not_a_list),
    Malformed("nbgrader_is_text", "nbgrader metadata that is not a mapping", _json(_nbgrader("solution"))),
    Malformed("grade_id_is_number", "an nbgrader grade_id that is not str", _json(_nbgrader({"grade_id": 7}))),
    Malformed(
        "points_is_text",
        "an nbgrader points that is not int or float",
        _json(_nbgrader({"grade_id": "a", "grade": True, "points": "ten"})),
    ),
    Malformed("metadata_is_list", "metadata that is not a mapping", _json(_set("metadata", []))),
    Malformed("source_is_number", "a source that is not text", _json(_set("source", 42))),
    Malformed("cell_of_no_type", "is of no known type", _json(_set("cell_type", "python"))),
    Malformed("folder", "is not a notebook file (a link, a folder or a device)", _folder),
    Malformed("link", "is not a notebook file (a link, a folder or a device)", _link),
    Malformed("huge_output", f"is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: clear its outputs", _huge),
)
