"""Which transfers each matmul waits for, read from the lowered program (StableHLO).

A collective matmul hides its communication only if the matmul of step s needs no more than the s
blocks that have arrived by then; one that passes every block round the ring first and multiplies
at the end sends the same bytes and overlaps nothing. The lowered program is the student's own
structure, before the compiler fuses and reorders it, so the dependencies are read there.

The reading is lenient where it cannot see: a value that enters a loop body or a region counts as
waiting for nothing, so only dependencies the straight-line program states are counted.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

_NAME = r'@("[^"]+"|[\w.$-]+)'  # a symbol, quoted when it is not an identifier: @"<lambda>"
_FUNC_RE = re.compile(r"^\s*func\.func\s+(?:(public|private)\s+)?" + _NAME + r"\((.*)$")
_PARAM_RE = re.compile(r"(%[\w.$-]+)\s*:")
_DEF_RE = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)?\s*=\s*(.*)$")
_VALUE_RE = re.compile(r"%[\w.$-]+")
_CALL_RE = re.compile(r"\bcall\s+" + _NAME)
_DOT_RE = re.compile(r"\bstablehlo\.dot(?:_general)?\b")
_PERMUTE = "stablehlo.collective_permute"

Depends = frozenset[int]  # the collective-permutes (one number per permute run) a value needs


@dataclass
class _Function:
    public: bool
    params: list[str]
    lines: list[str] = field(default_factory=list)


def matmul_waits(module_text: str) -> list[int]:
    """For every matmul the program runs, how many collective-permutes it depends on, sorted.
    Calls are followed (a jitted helper or an exported program is a private function), each call
    with its own permutes."""
    functions = _functions(module_text)
    permutes = itertools.count()

    def run(name: str, given: Depends) -> tuple[Depends, list[int]]:
        """Every param of ``name`` needs ``given``; what its results need (all of it, to stay
        safe), and the waits of its matmuls."""
        function = functions[name]
        depends = dict.fromkeys(function.params, given)
        everything, waits = given, list[int]()
        for line in function.lines:
            definition = _DEF_RE.match(line)
            if not definition:
                continue
            result, rest = definition.groups()
            needs = frozenset().union(*(depends.get(v, frozenset()) for v in _VALUE_RE.findall(rest)))
            if _PERMUTE in rest:
                needs |= {next(permutes)}
            for callee in _CALL_RE.findall(rest):
                if callee in functions:
                    inner, inner_waits = run(callee, needs)
                    needs, waits = needs | inner, waits + inner_waits
            if _DOT_RE.search(rest):
                waits.append(len(needs))
            depends[result] = needs
            everything |= needs
        return everything, waits

    waits = [w for name, f in functions.items() if f.public for w in run(name, frozenset())[1]]
    return sorted(waits)


def _functions(text: str) -> dict[str, _Function]:
    functions: dict[str, _Function] = {}
    current: _Function | None = None
    for line in text.splitlines():
        header = _FUNC_RE.match(line)
        if header:
            visibility, name, params = header.groups()
            current = functions[name] = _Function(visibility != "private", _PARAM_RE.findall(params))
        elif current is not None:
            current.lines.append(line)
    return functions


def overlap_problem(waits: list[int], steps: int) -> str:
    """'' when ``steps`` matmuls can each start as soon as their blocks arrive (the k-th fewest
    waits for at most k transfers); else what waits, in words."""
    if len(waits) >= steps and all(w <= k for k, w in enumerate(waits[:steps])):
        return ""
    shown = ", ".join(map(str, waits)) or "none"
    return (
        f"computes nothing while the blocks travel: a ring of {steps} overlaps its transfers with {steps} partial "
        f"matmuls, the one of step s waiting only for the s blocks that have arrived; this program's matmuls wait "
        f"for {shown} transfers"
    )
