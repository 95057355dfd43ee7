"""docs/instructor.md's walk-through of adding a part, read as steps and applied to a copy of the
course. Each code block's first line names its file and where the block goes, so a test that
follows the steps fails where the guide and the code disagree (a file, a name or a field that is
not there), never on what the test itself knows.

Where a block goes (after the file's path and a comma):

* nothing: a new file, the block's text;
* ``in NAME`` / ``in NAME's KEYWORD``: an entry (its comma added) at the end of the literal
  (tuple, list, dict) bound to the top-level ``NAME``, or passed as ``KEYWORD`` to the call bound
  to it;
* ``after NAME`` / ``replacing NAME``: the top-level statement that binds ``NAME``;
* in a notebook, ``a cell after GRADE_ID``: a code cell, its metadata the ``json`` block that
  follows; ``grade cells' points``: a dict of grade id to points.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import re
import shutil
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat

from .course import REPO

GUIDE = REPO / "docs" / "instructor.md"
SECTION = "## Adding a part to an assignment"
# What the tests that a new part touches need of the course: its package, instructor files and suite.
COPIED = ("autograder", "solutions", "tests", "assignments/source", "assignments/nbgrader_config.py", "pyproject.toml")
_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
_BLOCK = re.compile(r"^( *)```(\w+)\n(.*?)^\1```", re.M | re.S)


@dataclass(frozen=True)
class Step:
    path: str  # relative to the course's root
    where: str  # '' for a new file, else as the module docstring says
    text: str  # the block without its first line
    metadata: dict[str, Any] | None = None  # a notebook cell's


def steps(guide: str | None = None) -> list[Step]:
    """The section's blocks that name a file, in order, each notebook cell with its metadata."""
    text = guide if guide is not None else GUIDE.read_text()
    assert SECTION in text, f"docs/instructor.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    found: list[Step] = []
    for indent, language, body in _BLOCK.findall(section):
        body = textwrap.dedent("\n".join(line[len(indent) :] for line in body.splitlines()))
        if language == "json":
            assert found and found[-1].path.endswith(".ipynb"), "a json block follows the notebook cell it describes"
            found[-1] = Step(found[-1].path, found[-1].where, found[-1].text, json.loads(body))
        elif language == "python" and body.startswith("# ") and "/" in body.split("\n", 1)[0]:
            head, _, rest = body.partition("\n")
            path, _, where = head[2:].partition(", ")
            found.append(Step(path, where, rest))
    return found


def copy_sources(root: Path) -> Path:
    """The parts of the checkout ``COPIED`` names, under ``root``, without caches."""
    ignore = shutil.ignore_patterns("__pycache__", ".jaxcourse", ".ipynb_checkpoints")
    for name in COPIED:
        source, target = REPO / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree(source, target, ignore=ignore) if source.is_dir() else shutil.copy(source, target))
    return root


def apply(step: Step, root: Path) -> None:
    path = root / step.path
    if step.path.endswith(".ipynb"):
        _notebook(path, step)
    elif not step.where:
        assert not path.exists(), f"{step.path} is named as a new file, but the course has one"
        path.write_text(step.text.rstrip("\n") + "\n")
    else:
        assert path.is_file(), f"docs/instructor.md names {step.path}, which the course lacks"
        path.write_text(_edit(path.read_text(), step.where, step.text))


def load(path: Path, name: str) -> ModuleType:
    """A module of the copy, by file, without touching the checkout's of the same name. ``name``'s
    package resolves its relative imports (``autograder.specs.<x>`` for a spec). Compiled from its
    source, never through ``__pycache__``: the guide's steps can edit a file within one second and
    leave its size as it was, and bytecode cached by mtime and size would then be an earlier
    step's (Python 3.13's container, quicker than this machine, read 01 at 60 points so)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None, path
    module = importlib.util.module_from_spec(spec)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


def _bound(tree: ast.Module, name: str) -> ast.stmt:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            return node
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return node
    raise AssertionError(f"docs/instructor.md names {name}, which the file does not define at its top level")


def _edit(source: str, where: str, block: str) -> str:
    verb, _, name = where.partition(" ")
    lines = source.splitlines(keepends=True)
    block = block.rstrip("\n") + "\n"
    if verb == "in":
        name, _, keyword = name.partition("'s ")
        node = _bound(ast.parse(source), name)
        literal = node.value if isinstance(node, ast.Assign) else None
        if keyword:
            assert isinstance(literal, ast.Call), f"{name} is not a call"
            literal = next((k.value for k in literal.keywords if k.arg == keyword), None)
        assert isinstance(literal, ast.Tuple | ast.List | ast.Dict), f"{where}: no literal to add to"
        first = (literal.keys if isinstance(literal, ast.Dict) else literal.elts)[0]
        assert first is not None and literal.end_lineno is not None
        indent = " " * first.col_offset
        closing = literal.end_lineno - 1  # the line of the closing bracket, alone on it
        assert lines[closing].strip()[0] in ")]}", f"{where}: its closing bracket is not on a line of its own"
        return "".join(lines[:closing]) + textwrap.indent(_entry(block), indent) + "".join(lines[closing:])
    node = _bound(ast.parse(source), name)
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    assert node.end_lineno is not None
    if verb == "replacing":
        return "".join(lines[:start]) + block + "".join(lines[node.end_lineno :])
    assert verb == "after", f"{where}: say in, after or replacing"
    return "".join(lines[: node.end_lineno]) + "\n\n" + block + "".join(lines[node.end_lineno :])


def _entry(block: str) -> str:
    """``block`` as an entry of a literal: a comma after its last token, before any comment."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(block).readline) if t.type not in _NOT_CODE]
    if tokens[-1].string == ",":
        return block
    row, col = tokens[-1].end
    lines = block.splitlines(keepends=True)
    lines[row - 1] = lines[row - 1][:col] + "," + lines[row - 1][col:]
    return "".join(lines)


def _notebook(path: Path, step: Step) -> None:
    nb = nbformat.read(path, as_version=4)
    ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells]
    if step.where == "grade cells' points":
        for grade_id, points in ast.literal_eval(step.text).items():
            assert grade_id in ids, f"the notebook has no cell {grade_id}"
            nb.cells[ids.index(grade_id)].metadata["nbgrader"]["points"] = points
    else:
        after = step.where.removeprefix("a cell after ")
        assert after in ids and step.metadata is not None, f"{step.where}: no such cell, or no metadata for it"
        cell = nbformat.v4.new_code_cell(step.text.rstrip("\n"), metadata=step.metadata)
        nb.cells.insert(ids.index(after) + 1, cell)
    nbformat.write(nb, path)
