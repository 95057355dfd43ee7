"""A compiled HLO module's text, parsed: its computations, their instructions, and which
computations each instruction calls and how often. The census of collectives (``hlo.py``) and
the count of FLOPs (``flops.py``) both read a program through it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from math import prod

ITEMSIZE = {
    "pred": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
}
ARRAY_RE = re.compile(r"\b(" + "|".join(ITEMSIZE) + r")\[([\d,]*)\]")
# A computation's header: ``ENTRY %main (a: f32[8]) -> f32[8] {`` as XLA prints one; XLA's own
# tests also write ``ENTRY main {`` and ``add {`` (no signature) and indent them.
_HEADER_RE = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*)?\{\s*$")
_INSTR_RE = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_OPERAND_RE = re.compile(r"%([\w.\-]+)")
_PARTITIONS_RE = re.compile(r"num_partitions=(\d+)")
_TRIP_RE = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')
_BODY_RE = re.compile(r"body=%?([\w.\-]+)")
_CALLS_RE = re.compile(r"\bcalls=%?([\w.\-]+)")
_TO_APPLY_RE = re.compile(r"\bto_apply=%?([\w.\-]+)")
_TRUE_FALSE_RE = re.compile(r"(?:true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES_RE = re.compile(r"branch_computations=\{([^}]*)\}")
# Every attribute that names a computation holds one of these: an instruction whose text has
# none calls nothing, which most of a module's instructions are (a census reads each one).
_CALLING_RE = re.compile(r"calls=|_computation|body=|to_apply=")


@dataclass
class Instr:
    """One instruction: its name, its op (``dot``, ``all-gather-start``...), its result type and
    everything after the op's opening parenthesis (operands, then attributes); ``root`` where
    it is its computation's result."""

    name: str
    op: str
    result_type: str
    attrs: str
    root: bool = False

    def operands(self) -> list[str]:
        """The names of the instruction's operands, in order."""
        return _OPERAND_RE.findall(self.attrs[: closing_paren("(" + self.attrs)])


@dataclass
class Module:
    """A parsed module, shared by every reader of the same text: read it, never change it."""

    computations: dict[str, list[Instr]]
    entry: str | None
    partitions: int


@lru_cache(maxsize=8)
def parse_module(text: str) -> Module:
    """``text`` parsed once however many read it: the census, the FLOPs, the timeline and the
    roofline each read the same compiled program (a trusted job parsed 24 programs 56 times)."""
    comps: dict[str, list[Instr]] = {}
    entry = None
    current: list[Instr] | None = None
    match = _PARTITIONS_RE.search(text)
    partitions = int(match.group(1)) if match else 1
    for line in text.splitlines():
        header = _HEADER_RE.match(line)
        if header and "=" not in line.split("(")[0]:
            current = comps.setdefault(header.group(2), [])
            if header.group(1):
                entry = header.group(2)
            continue
        if line.strip() == "}":
            current = None
            continue
        instr = _INSTR_RE.match(line)
        if current is not None and instr:
            current.append(_split_instr(instr.group(2), instr.group(3), bool(instr.group(1))))
    return Module(comps, entry, partitions)


def _split_instr(name: str, rest: str, root: bool) -> Instr:
    rest = rest.strip()
    if rest.startswith("("):
        end = closing_paren(rest) + 1
        result_type, rest = rest[:end], rest[end:].strip()
    else:
        result_type, _, rest = rest.partition(" ")
    op, _, attrs = rest.partition("(")
    return Instr(name, op.strip(), result_type, attrs, root)


def closing_paren(text: str) -> int:
    """The index of the ``)`` that closes the ``(`` at ``text[0]`` (the last index if none does)."""
    depth = 0
    for index, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return index
    return len(text) - 1


def multiplicities(comps: dict[str, list[Instr]], entry: str) -> dict[str, int | None]:
    """How many times each computation reachable from ENTRY runs (None: unknown)."""
    times: dict[str, int | None] = {}

    def visit(comp: str, n: int | None) -> None:
        if comp not in comps:
            return
        old = times.get(comp, 0)
        times[comp] = None if n is None or old is None else old + n
        for ins in comps[comp]:
            for callee, factor in callees(ins):
                visit(callee, None if n is None or factor is None else n * factor)

    visit(entry, 1)
    return times


def trip_count(ins: Instr) -> int | None:
    """The trip count XLA recorded for a while loop, or None where it could not."""
    trip = _TRIP_RE.search(ins.attrs)
    return int(trip.group(1)) if trip else None


def branches(ins: Instr) -> list[str]:
    """The computations a conditional chooses among (one of them runs)."""
    names = _TRUE_FALSE_RE.findall(ins.attrs)
    for group in _BRANCHES_RE.findall(ins.attrs):
        names += [n.strip().lstrip("%") for n in group.split(",")]
    return names


def callees(ins: Instr) -> list[tuple[str, int | None]]:
    """The computations ``ins`` runs and how often each time it runs: a while loop's body by its
    trip count (None where unknown), a fusion's or an asynchronous op's body, a called
    computation, and every branch of a conditional (once each: which one runs is not known). An
    ``async-update`` or ``async-done`` may name its ``async-start``'s computation too (XLA printed
    ``calls=`` on all three); it runs once, so only the start's counts."""
    if ins.op in ("async-update", "async-done"):  # the async-start's computation, which runs once
        return []
    if not _CALLING_RE.search(ins.attrs):
        return []
    if ins.op == "while":
        body = _BODY_RE.search(ins.attrs)
        return [(body.group(1), trip_count(ins))] if body else []
    names = _CALLS_RE.findall(ins.attrs) + branches(ins)
    if ins.op in ("call", "call-start"):  # a called computation (a reduction's to_apply is not one)
        names += _TO_APPLY_RE.findall(ins.attrs)
    return [(name, 1) for name in names]


def arrays(type_text: str) -> list[tuple[tuple[int, ...], int]]:
    """(dimensions, item size) of each array a type names: one for an array, each member's for
    a tuple."""
    return [(tuple(int(d) for d in dims.split(",") if d), ITEMSIZE[dt]) for dt, dims in ARRAY_RE.findall(type_text)]


def tuple_members(type_text: str) -> list[str] | None:
    """The top-level members of a tuple type, each as text (``((f32[2], f32[2]), f32[4], u32[])``
    has three), or None for an array type."""
    text = type_text.strip()
    if not text.startswith("("):
        return None
    inner = text[1 : closing_paren(text)]
    return [member.strip() for member in split_top_level(inner) if member.strip()]


def split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets, braces and parentheses (a layout such as
    ``{2,1,0:T(8,128)}`` holds both)."""
    pieces, depth, start = [], 0, 0
    for index, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            pieces.append(text[start:index])
            start = index + 1
    pieces.append(text[start:])
    return pieces


def operands(ins: Instr) -> list[str]:
    """The operands ``ins`` takes, each as printed (``f32[8,16]{1,0} %a`` or ``%a``):
    ``all-reduce-start(p0, p1)`` takes two."""
    listed = ins.attrs[: closing_paren("(" + ins.attrs) - 1]
    return [piece.strip() for piece in split_top_level(listed) if piece.strip()]


def elements(dims: tuple[int, ...]) -> int:
    return prod(dims)
