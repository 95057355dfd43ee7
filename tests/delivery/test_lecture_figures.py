"""A lecture's numbers hold on the next JAX: what a compiled program's census says (which
collectives XLA chose, how many, the values they send) is XLA's choice, which another release may
make otherwise. A lecture asserts it only through ``within`` (the bounds any correct plan meets,
the exact figure printed beside its JAX version); the collectives a ``shard_map`` program wrote are
asserted exactly on its jaxpr. This reads every lecture's code and refuses a bare ``assert`` that
compares a census's figure."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..helpers.course import REPO

LECTURES = sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb"))
# A census's figures that a compiler chooses; farthest_hops is the pairs a program wrote.
FIGURES = {
    "counts",
    "by_axes",
    "values_per_device",
    "bytes_per_device",
    "values_by_op",
    "values_by_axes",
    "wire_by_op",
    "wire_by_axes",
}


@dataclass(frozen=True)
class Exact:
    lecture: str
    cell: int  # code cells counted from 1
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.lecture}, code cell {self.cell}, line {self.line}: {self.text}"


def _code(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == name for n in ast.walk(node))


def _bound(node: ast.Assign | ast.For) -> set[str]:
    """The names an assignment or a for loop binds."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)}


def _censuses(trees: list[ast.Module]) -> tuple[set[str], set[str]]:
    """The lecture's functions that make a census (through ``hlo_census`` or one another), and
    the names bound to what one returns."""
    functions = {"hlo_census"}
    defined = [n for tree in trees for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    while True:
        more = {f.name for f in defined if any(_calls(f, name) for name in functions)} - functions
        if not more:
            break
        functions |= more
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.For)):
                value = node.value if isinstance(node, ast.Assign) else node.iter
                if any(_calls(value, f) for f in functions):
                    names |= _bound(node)
    return functions, names


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node


def _is_census(node: ast.AST, functions: set[str], names: set[str]) -> bool:
    node = _root(node)
    return (isinstance(node, ast.Name) and node.id in names) or (
        isinstance(node, ast.Call) and getattr(node.func, "id", None) in functions
    )


def _reads_a_figure(operand: ast.AST, functions: set[str], names: set[str]) -> bool:
    """A census's figure read in ``operand``: an attribute such as ``.counts`` of a census, or
    what a lecture's census function returns, compared as it is."""
    if _is_census(operand, functions, names):
        return True
    return any(
        isinstance(n, ast.Attribute) and n.attr in FIGURES and _is_census(n.value, functions, names)
        for n in ast.walk(operand)
    )


def exact_figures(notebook: Path) -> list[Exact]:
    """Each ``assert`` of the lecture that compares a census's figure with ``==`` or ``!=``."""
    sources = _code(notebook)
    trees = [ast.parse(src) if not src.lstrip().startswith(("%", "!")) else ast.Module([], []) for src in sources]
    functions, names = _censuses(trees)
    found = []
    for cell, (src, tree) in enumerate(zip(sources, trees, strict=True), 1):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assert):
                continue
            for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                exact = any(isinstance(op, (ast.Eq, ast.NotEq)) for op in compare.ops)
                operands = [compare.left, *compare.comparators]
                if exact and any(_reads_a_figure(o, functions, names) for o in operands):
                    text = ast.get_source_segment(src, node) or ""
                    found.append(Exact(notebook.stem, cell, node.lineno, text.splitlines()[0]))
                    break
    return found


@pytest.mark.parametrize("lecture", LECTURES, ids=lambda p: p.stem)
def test_no_lecture_asserts_the_exact_figure_a_compiler_chose(lecture):
    found = exact_figures(lecture)
    assert not found, "assert these through autograder.trace.within, or on the jaxpr:\n" + "\n".join(map(str, found))


def test_the_check_finds_an_exact_census_figure_however_it_is_spelled(tmp_path):
    cells = [
        "census = hlo_census(text)\nassert dict(census.counts) == {'all-reduce': 1}",
        "def sent(f):\n    c = hlo_census(f)\n    return dict(c.counts), c.values_per_device",
        "assert sent(f) == ({}, 0)\nassert census.values_by_op['all-gather'] != 3",
        "sends = {n: sent(f) for n in 'ab'}\nassert sends['a'] == sends['b']",
        "def run(f):\n    return f(), sent(f)\ngot, _ = run(f)\nassert got[0].tolist() == [4] and run(f)[1] == 3",
        "assert census.farthest_hops == 1 and 0 < census.values_per_device <= 28\nprint(within(census, {'all-reduce'}, 28))",
    ]
    notebook = tmp_path / "99_made_up.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": c} for c in cells]}))
    assert [(e.cell, e.line) for e in exact_figures(notebook)] == [(1, 2), (3, 1), (3, 2), (4, 2), (5, 4)]
