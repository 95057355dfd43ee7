"""The source notebooks' cells, solution regions and the functions they must equal."""

from __future__ import annotations

import ast
import textwrap

import nbformat


def cells_by_grade_id(nb: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """Every nbgrader cell of ``nb``, by its grade_id."""
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


def function(text: str, name: str) -> ast.FunctionDef:
    """The top-level function ``name`` in ``text``."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise AssertionError(f"no function {name}")


def solution_region(source: str) -> str:
    """What a cell holds between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, dedented."""
    inside = source.split("### BEGIN SOLUTION\n", 1)[1].split("### END SOLUTION", 1)[0]
    return textwrap.dedent(inside).strip()
