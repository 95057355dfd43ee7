"""The functions a lecture defines, as a student who read it has them, without running the lecture.

A lecture's code cells are read as one program of top-level statements. The functions it defines
(each ``def`` at the top level of a cell) are executed with only what they need: the statements
that bind a name they read as a global (imports, constants, meshes, the other functions), and what
those need in turn, in the lecture's order. What the lecture runs to show its results (training,
timing, its own multi-process and cluster runs) binds no name a function reads, so it is left out:
seconds for every lecture, where running them takes minutes and lecture 07 a cluster. An exercise's
stub is replaced by its worked answer (``solutions/lecture_<stem>.py``): a student who did the
exercise has it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import symtable
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from autograder.specs import EXERCISES

from .course import REPO

LECTURES = sorted((REPO / "course").glob("*.ipynb"))


@dataclass(frozen=True)
class Statement:
    """One top-level statement of a lecture: its code, the names it binds and the globals it reads."""

    cell: int
    node: ast.stmt
    binds: frozenset[str]
    reads: frozenset[str]
    defines: str | None  # the function a top-level ``def`` defines


def python_source(cell: str) -> str:
    """A code cell as Python: IPython's syntax (magics, shell escapes) turned into calls, as the
    grader's runner does it."""
    try:
        ast.parse(cell)
        return cell
    except SyntaxError:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(cell)


def statements(path: Path) -> list[Statement]:
    """Every top-level statement of the lecture's code cells, in order."""
    found = []
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for node in ast.parse(python_source(cell.source)).body:
            binds, reads = _names(ast.unparse(node))
            defines = node.name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None
            found.append(Statement(index, node, binds, reads, defines))
    return found


def _names(code: str) -> tuple[frozenset[str], frozenset[str]]:
    """The module-level names ``code`` binds, and the globals it (or any function in it) reads."""
    table = symtable.symtable(code, "<cell>", "exec")
    binds = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    reads = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    reads |= set(_globals_read(table))
    return frozenset(binds), frozenset(reads)


def _globals_read(table: symtable.SymbolTable) -> Iterator[str]:
    for child in table.get_children():
        for symbol in child.get_symbols():
            if symbol.is_global() and symbol.is_referenced():
                yield symbol.get_name()
        yield from _globals_read(child)


def needed(program: list[Statement]) -> list[Statement]:
    """The functions' statements and what they need, transitively: every statement that binds a
    name read by one already taken, in the lecture's order."""
    taken = {i for i, s in enumerate(program) if s.defines}
    wanted = set().union(*(program[i].reads for i in taken))
    while True:
        more = {i for i, s in enumerate(program) if i not in taken and s.binds & wanted}
        if not more:
            return [program[i] for i in sorted(taken)]
        taken |= more
        wanted |= set().union(*(program[i].reads for i in more))


class _NoShell:
    """IPython's shell, for a magic the lecture needs: it does nothing, as in the grader's runner."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def lecture_functions(path: Path) -> dict[str, Callable[..., Any]]:
    """Each function the lecture defines at the top level of a cell, by name (the last definition
    of a name, as the lecture leaves it), its exercises answered."""
    program = statements(path)
    namespace: dict[str, Any] = {"__name__": f"lecture_{path.stem}", "get_ipython": _NoShell}
    for statement in needed(program):
        code = ast.Module(body=[statement.node], type_ignores=[])
        exec(compile(code, f"<{path.name}, cell {statement.cell + 1}>", "exec"), namespace)
    functions = {s.defines: namespace[s.defines] for s in program if s.defines}
    answers = importlib.import_module(f"solutions.lecture_{path.stem}")
    for task in exercises(path):
        assert task in functions, f"{path.name} has no stub for its exercise {task}"
        functions[task] = getattr(answers, task)
    return functions


def exercises(path: Path) -> list[str]:
    return [t.name for a in EXERCISES.values() if a.notebook == path.name for t in a.tasks]


def positional(fn: Callable[..., Any]) -> tuple[int, float] | None:
    """How many positional arguments ``fn`` needs and how many it takes (``inf`` with ``*args``);
    None where no positional call can satisfy it (a keyword-only parameter without a default)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    by_position = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params):
        return None
    required = sum(p.default is p.empty for p in by_position)
    takes = math.inf if any(p.kind is p.VAR_POSITIONAL for p in params) else len(by_position)
    return required, takes
