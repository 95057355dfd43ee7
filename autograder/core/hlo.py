"""What a function really does: collectives in its StableHLO, its compiled HLO and its jaxpr.

The compiled HLO is what runs, so bytes moved are read from it; collectives inside while loops are
multiplied by the trip count XLA recorded, and flagged when it could not record one.

Traffic is measured twice: values sent, and values times the links each send crosses on a network
shaped like the mesh (a ring per axis, a torus for several). A ring's sends go to neighbours, one
link each; N - 1 direct sends move the same values over up to N/2 links each.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from math import prod
from typing import Any

from . import records
from .tasks import COLLECTIVES, HLO_TO_JAX

HLO_COLLECTIVES = frozenset(COLLECTIVES.values())
_ITEMSIZE = {
    "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
    "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}  # fmt: skip
_ARRAY_RE = re.compile(r"\b(" + "|".join(_ITEMSIZE) + r")\[([\d,]*)\]")
_STABLEHLO_OPS = r"stablehlo\.(all_gather|all_reduce|reduce_scatter|collective_permute|all_to_all)\b"
_STABLEHLO_RE = re.compile(_STABLEHLO_OPS)
# An op's function type follows it, after any attributes and reduction region:
# `... }) : (tensor<4x2xbf16>) -> tensor<...>`; attributes are typed too, but never parenthesised.
_STABLEHLO_TYPED_RE = re.compile(_STABLEHLO_OPS + r".*?:\s*\(tensor<(?:[\d?]+x)*(\w+)>", re.S)
_MLIR_ITEMSIZE = {"i1": 1, "i8": 1, "ui8": 1, "i16": 2, "ui16": 2, "f16": 2, "bf16": 2, "i32": 4, "ui32": 4,
                  "f32": 4, "i64": 8, "ui64": 8, "f64": 8}  # fmt: skip
# A custom call's target, in each way MLIR prints one: `custom_call @name(`, `custom_call
# @"any text"(` (a name MLIR must quote) and the generic `call_target_name = "..."`.
_CUSTOM_CALL_RE = re.compile(
    r'custom_call\s*@(?:"((?:[^"\\]|\\.)*)"|([\w.$-]+))|call_target_name\s*=\s*"((?:[^"\\]|\\.)*)"'
)
_CUSTOM_CALL_WORD_RE = re.compile(r"\bcustom_call\b")
_HEADER_RE = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s+\(.*\{\s*$")
_INSTR_RE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_PAIRS_RE = re.compile(r"source_target_pairs=\{((?:\{\d+,\d+\},?)*)\}")


def stablehlo_collectives(module_text: str) -> Counter[str]:
    """Collectives the program asks for, in HLO spelling (``all-gather``...)."""
    return Counter(m.group(1).replace("_", "-") for m in _STABLEHLO_RE.finditer(module_text))


def stablehlo_itemsizes(module_text: str) -> dict[str, int]:
    """Bytes per value of each collective as the program asks for it (HLO spelling), before a
    backend widens anything: XLA:CPU, for one, computes and sends bfloat16 as float32."""
    sizes: dict[str, int] = {}
    for match in _STABLEHLO_TYPED_RE.finditer(module_text):
        op = match.group(1).replace("_", "-")
        sizes[op] = max(sizes.get(op, 0), _MLIR_ITEMSIZE.get(match.group(2), 4))
    return sizes


def program_bytes(census: Census, itemsizes: dict[str, int]) -> float | None:
    """Bytes one device sends at the program's own dtypes: the values of each collective the
    compiled HLO runs, times the item size the program gave that kind of collective. A kind the
    compiler introduced by itself counts at the widest size the program asked for."""
    if census.values_per_device is None:
        return None
    widest = max(itemsizes.values(), default=0)
    return sum(values * itemsizes.get(op, widest) for op, values in census.values_by_op.items())


def custom_call_targets(module_text: str) -> set[str]:
    """Every custom call's target; a custom call whose target cannot be read counts as the
    target ``<unreadable>``, which no allow-list holds (a pattern that missed one let it through)."""
    found = {quoted or plain or generic for quoted, plain, generic in _CUSTOM_CALL_RE.findall(module_text)}
    printed = len(_CUSTOM_CALL_WORD_RE.findall(module_text))
    read = len(_CUSTOM_CALL_RE.findall(module_text))
    return found | ({"<unreadable>"} if printed > read else set())


@dataclass
class Census:
    """Collectives in a compiled module, each counted as often as it runs."""

    counts: Counter[str] = field(default_factory=Counter)
    # Values and bytes one device sends, under ring algorithms. Values are what the task bounds:
    # a backend may widen a type on the wire (XLA:CPU sends bfloat16 as float32), values stay.
    values_per_device: float | None = 0
    bytes_per_device: float | None = 0
    unbounded: list[str] = field(default_factory=list)  # collectives in loops of unknown length
    values_by_op: Counter[str] = field(default_factory=Counter)  # values sent, per collective kind
    # Values times links crossed, each collective-permute at its farthest pair (exact when every
    # device sends as far, as rings and shifts do); other collectives count one link per value
    # (their ring algorithms send to neighbours).
    link_values_per_device: float | None = 0
    farthest_hops: int = 0  # the most links one collective-permute pair crosses
    # Given the mesh's axis names: the axes each collective spans ("data", "data,model"), and how
    # often each kind runs across them; "" for one that spans no axis (a group of one device).
    by_axes: dict[str, Counter[str]] = field(default_factory=dict)

    def to_json(self) -> records.Census:
        return {
            "counts": dict(self.counts),
            "values_per_device": self.values_per_device,
            "bytes_per_device": self.bytes_per_device,
            "unbounded": self.unbounded,
            "link_values_per_device": self.link_values_per_device,
            "farthest_hops": self.farthest_hops,
            "by_axes": {axes: dict(counts) for axes, counts in self.by_axes.items()},
        }


@dataclass
class _Instr:
    name: str
    op: str
    result_type: str
    attrs: str


def hlo_census(
    hlo_text: str, mesh_shape: tuple[int, ...] | None = None, axis_names: tuple[str, ...] | None = None
) -> Census:
    """Count collectives and bytes sent per device, following while loops by their trip counts.
    ``mesh_shape`` lays the partitions out (row-major, as a mesh numbers them) on the network
    whose links are counted; without it they form one ring. With ``axis_names`` too, each
    collective is also counted under the mesh axes its groups span."""
    comps, entry, partitions = _parse_module(hlo_text)
    census = Census()
    if entry is None:
        return census
    shape = mesh_shape or (partitions,)
    values = nbytes = links = 0.0
    for comp, times in _multiplicities(comps, entry).items():
        for ins in comps[comp]:
            op = ins.op.removesuffix("-start")
            if op not in HLO_COLLECTIVES or ins.op.endswith("-done"):
                continue
            if axis_names is not None:
                axes = ",".join(spanned_axes(op, ins.attrs, shape, axis_names))
                census.by_axes.setdefault(axes, Counter())[op] += 1 if times is None else times
            if times is None:
                census.unbounded.append(HLO_TO_JAX[op])
                census.counts[op] += 1
                continue
            census.counts[op] += times
            fraction = times * _fraction_sent(op, ins.attrs, partitions)
            hops = 1
            if op == "collective-permute":
                hops = _farthest_hops(ins.attrs, shape)
                census.farthest_hops = max(census.farthest_hops, hops)
            for elements, itemsize in _result_arrays(ins.result_type, ins.op.endswith("-start")):
                values += fraction * elements
                nbytes += fraction * elements * itemsize
                links += fraction * elements * hops
                census.values_by_op[op] += fraction * elements  # type: ignore[assignment]  # typeshed fixes a Counter's values to int; these are fractions
    if census.unbounded:
        census.values_per_device = census.bytes_per_device = census.link_values_per_device = None
    else:
        census.values_per_device, census.bytes_per_device, census.link_values_per_device = values, nbytes, links
    return census


def _farthest_hops(attrs: str, mesh_shape: tuple[int, ...]) -> int:
    """The most links any source-target pair of a collective-permute crosses on a torus shaped
    like the mesh: per axis, the shorter way round its ring."""
    match = _PAIRS_RE.search(attrs)
    if not match:
        return 1
    pairs = [tuple(map(int, p)) for p in re.findall(r"\{(\d+),(\d+)\}", match.group(1))]
    return max((torus_hops(s, t, mesh_shape) for s, t in pairs), default=0)


def torus_hops(source: int, target: int, mesh_shape: tuple[int, ...]) -> int:
    """Links between two devices, numbered row-major over ``mesh_shape``, when each mesh axis is
    a ring: a neighbour is 1, the device opposite on a ring of 8 is 4."""
    hops = 0
    for size in reversed(mesh_shape):
        (source, a), (target, b) = divmod(source, size), divmod(target, size)
        hops += min((a - b) % size, (b - a) % size)
    return hops


def spanned_axes(op: str, attrs: str, mesh_shape: tuple[int, ...], axis_names: tuple[str, ...]) -> list[str]:
    """The mesh axes along which the devices of one group of this collective differ, in mesh
    order: a psum over ``model`` on a ``data x model`` mesh spans ``model`` only."""
    varying: set[int] = set()
    for group in _device_groups(op, attrs, prod(mesh_shape)):
        coords = [_coords(device, mesh_shape) for device in group]
        varying |= {axis for axis in range(len(mesh_shape)) if len({c[axis] for c in coords}) > 1}
    return [axis_names[axis] for axis in sorted(varying)]


def _coords(device: int, mesh_shape: tuple[int, ...]) -> tuple[int, ...]:
    """A device's place on the mesh, numbered row-major as a mesh numbers its devices."""
    coords = []
    for size in reversed(mesh_shape):
        device, at = divmod(device, size)
        coords.append(at)
    return tuple(reversed(coords))


_IOTA = r"\[([\d,]+)\](?:T\(([\d,]+)\))?"  # iota over dims, then transposed: [2,4]T(1,0)
_NAMED_GROUPS_RE = re.compile(r"replica_groups=mesh\[([^\]]*)\](?:,\s*device_ids=\(" + _IOTA + r"\))?\s*\{([^}]*)\}")
_IOTA_GROUPS_RE = re.compile(r"replica_groups=\[([\d,]+)\]<=" + _IOTA)
_EXPLICIT_GROUPS_RE = re.compile(r"replica_groups=\{((?:\{[\d,]*\},?)*)\}")


def _device_groups(op: str, attrs: str, devices: int) -> list[list[int]]:
    """The groups of devices a collective runs over: a collective-permute's pairs, explicit
    replica groups, the iota form ``[G,S]<=[dims]T(perm)``, or the partitioner's named form
    (``mesh['axis_0'=2,'axis_1'=4], device_ids=([2,4]T(1,0)) {'axis_0'}``); every device when
    none is given."""
    import numpy as np

    if op == "collective-permute":
        match = _PAIRS_RE.search(attrs)
        pairs = re.findall(r"\{(\d+),(\d+)\}", match.group(1)) if match else []
        return [[int(s), int(t)] for s, t in pairs]
    named = _NAMED_GROUPS_RE.search(attrs)
    if named:
        dims = [(name, int(size)) for name, size in re.findall(r"'([^']+)'=(\d+)", named.group(1))]
        shape = [size for _, size in dims]
        ids = _iota(named.group(2), named.group(3)) if named.group(2) else np.arange(prod(shape))
        grid = ids.reshape(shape)
        chosen = set(re.findall(r"'([^']+)'", named.group(4)))
        inside = [i for i, (name, _) in enumerate(dims) if name in chosen]
        outside = [i for i in range(len(dims)) if i not in inside]
        rows = grid.transpose(outside + inside).reshape(-1, prod(shape[i] for i in inside))
        return [list(map(int, row)) for row in rows]
    iota = _IOTA_GROUPS_RE.search(attrs)
    if iota:
        shape = [int(d) for d in iota.group(1).split(",")]
        return [list(map(int, row)) for row in _iota(iota.group(2), iota.group(3)).reshape(shape[0], -1)]
    explicit = _EXPLICIT_GROUPS_RE.search(attrs)
    if explicit and explicit.group(1):
        return [[int(d) for d in g.split(",") if d] for g in re.findall(r"\{([\d,]*)\}", explicit.group(1))]
    return [list(range(devices))]


def _iota(dims: str, perm: str | None) -> Any:
    """Device ids 0..n-1 laid out over ``dims``, transposed by ``perm``, flattened."""
    import numpy as np

    ids = np.arange(prod(int(d) for d in dims.split(","))).reshape([int(d) for d in dims.split(",")])
    if perm:
        ids = ids.transpose([int(p) for p in perm.split(",")])
    return ids.reshape(-1)


def _parse_module(text: str) -> tuple[dict[str, list[_Instr]], str | None, int]:
    comps: dict[str, list[_Instr]] = {}
    entry = None
    current: list[_Instr] | None = None
    match = re.search(r"num_partitions=(\d+)", text)
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
            current.append(_split_instr(instr.group(1), instr.group(2)))
    return comps, entry, partitions


def _split_instr(name: str, rest: str) -> _Instr:
    rest = rest.strip()
    if rest.startswith("("):
        end = _closing_paren(rest) + 1
        result_type, rest = rest[:end], rest[end:].strip()
    else:
        result_type, _, rest = rest.partition(" ")
    op, _, attrs = rest.partition("(")
    return _Instr(name, op.strip(), result_type, attrs)


def _closing_paren(text: str) -> int:
    """The index of the ``)`` that closes the ``(`` at ``text[0]`` (the last index if none does)."""
    depth = 0
    for index, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return index
    return len(text) - 1


def _multiplicities(comps: dict[str, list[_Instr]], entry: str) -> dict[str, int | None]:
    """How many times each computation reachable from ENTRY runs (None: unknown)."""
    times: dict[str, int | None] = {}

    def visit(comp: str, n: int | None) -> None:
        if comp not in comps:
            return
        old = times.get(comp, 0)
        times[comp] = None if n is None or old is None else old + n
        for ins in comps[comp]:
            for callee, factor in _callees(ins):
                visit(callee, None if n is None or factor is None else n * factor)

    visit(entry, 1)
    return times


def _callees(ins: _Instr) -> list[tuple[str, int | None]]:
    if ins.op == "while":
        body = re.search(r"body=%?([\w.\-]+)", ins.attrs)
        trip = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', ins.attrs)
        return [(body.group(1), int(trip.group(1)) if trip else None)] if body else []
    names = re.findall(r"(?:calls|true_computation|false_computation)=%?([\w.\-]+)", ins.attrs)
    for group in re.findall(r"branch_computations=\{([^}]*)\}", ins.attrs):
        names += [n.strip().lstrip("%") for n in group.split(",")]
    return [(name, 1) for name in names]


def _result_arrays(type_text: str, asynchronous: bool) -> list[tuple[int, int]]:
    """(element count, item size) of each array a collective produces. A tuple result (psum of
    several arrays, merged into one all-reduce) sends every member; an async ``-start`` op's
    tuple holds its operand and result as well, so only the largest counts."""
    arrays = [(prod(int(d) for d in dims.split(",") if d), _ITEMSIZE[dt]) for dt, dims in _ARRAY_RE.findall(type_text)]
    return [max(arrays, default=(0, 0))] if asynchronous else arrays


def _group_size(attrs: str, partitions: int) -> int:
    named = re.search(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}", attrs)
    if named:  # the partitioner's form: mesh['x'=2,'y'=4] {'y'}
        sizes = {k: int(v) for k, v in re.findall(r"'([^']+)'=(\d+)", named.group(1))}
        return prod(sizes[name] for name in re.findall(r"'([^']+)'", named.group(2)))
    iota = re.search(r"replica_groups=\[([\d,]+)\]<=", attrs)
    if iota:
        return int(iota.group(1).split(",")[-1])
    groups = re.search(r"replica_groups=\{\{([\d,]*)\}", attrs)
    if groups and groups.group(1):
        return len(groups.group(1).split(","))
    return partitions


def _fraction_sent(op: str, attrs: str, partitions: int) -> float:
    """Values one device sends per value of the op's result, under ring algorithms."""
    if op == "collective-permute":
        return 1.0
    n = _group_size(attrs, partitions)
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op == "reduce-scatter":
        return float(n - 1)
    return (n - 1) / n  # all-gather, all-to-all: the result holds all n pieces
