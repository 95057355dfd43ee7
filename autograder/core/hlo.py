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
from .hlo_text import Instr, arrays, multiplicities, operands, parse_module, tuple_members
from .tasks import COLLECTIVES, HLO_TO_JAX

HLO_COLLECTIVES = frozenset(COLLECTIVES.values())
_STABLEHLO_OPS = r"stablehlo\.(all_gather|all_reduce|reduce_scatter|collective_permute|all_to_all)\b"
_STABLEHLO_RE = re.compile(_STABLEHLO_OPS)
# An op's function type follows it, after any attributes and reduction region:
# `... }) : (tensor<4x2xbf16>) -> tensor<...>`; attributes are typed too, but never parenthesised.
_STABLEHLO_TYPED_RE = re.compile(_STABLEHLO_OPS + r".*?:\s*\(tensor<(?:[\d?]+x)*(\w+)>", re.S)
_MLIR_ITEMSIZE = {
    "i1": 1,
    "i8": 1,
    "ui8": 1,
    "i16": 2,
    "ui16": 2,
    "f16": 2,
    "bf16": 2,
    "i32": 4,
    "ui32": 4,
    "f32": 4,
    "i64": 8,
    "ui64": 8,
    "f64": 8,
}
# A custom call's target, in each way MLIR prints one: `custom_call @name(`, `custom_call
# @"any text"(` (a name MLIR must quote) and the generic `call_target_name = "..."`.
_CUSTOM_CALL_RE = re.compile(
    r'custom_call\s*@(?:"((?:[^"\\]|\\.)*)"|([\w.$-]+))|call_target_name\s*=\s*"((?:[^"\\]|\\.)*)"'
)
_CUSTOM_CALL_WORD_RE = re.compile(r"\bcustom_call\b")
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
    compiler introduced by itself counts at the widest size the program asked for; where the
    program asked for none (the partitioner placed every collective), at the wire's."""
    if census.values_per_device is None:
        return None
    return _at_dtypes(census.values_by_op, census.wire_by_op, itemsizes)


def program_bytes_by_axes(census: Census, itemsizes: dict[str, int]) -> dict[str, float] | None:
    """``program_bytes`` over each set of mesh axes the collectives span (``"data"``,
    ``"data,model"``): what one device sends along each; the census must have been taken with
    the mesh's axis names."""
    if census.values_per_device is None:
        return None
    return {
        axes: _at_dtypes(values, census.wire_by_axes[axes], itemsizes)
        for axes, values in sorted(census.values_by_axes.items())
    }


def _at_dtypes(values: Counter[str], wire: Counter[str], itemsizes: dict[str, int]) -> float:
    if not itemsizes:
        return float(sum(wire.values()))
    widest = max(itemsizes.values())
    return sum(sent * itemsizes.get(op, widest) for op, sent in values.items())


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
    values_by_axes: dict[str, Counter[str]] = field(default_factory=dict)  # values sent, per axes and kind
    wire_by_op: Counter[str] = field(default_factory=Counter)  # bytes on this backend's wire, per kind
    wire_by_axes: dict[str, Counter[str]] = field(default_factory=dict)  # and per axes and kind

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


def hlo_census(
    hlo_text: str, mesh_shape: tuple[int, ...] | None = None, axis_names: tuple[str, ...] | None = None
) -> Census:
    """Count collectives and bytes sent per device, following while loops by their trip counts.
    ``mesh_shape`` lays the partitions out (row-major, as a mesh numbers them) on the network
    whose links are counted; without it they form one ring. With ``axis_names`` too, each
    collective is also counted under the mesh axes its groups span."""
    module = parse_module(hlo_text)
    comps, entry, partitions = module.computations, module.entry, module.partitions
    census = Census()
    if entry is None:
        return census
    shape = mesh_shape or (partitions,)
    values = nbytes = links = 0.0
    for comp, times in multiplicities(comps, entry).items():
        for ins in comps[comp]:
            op = ins.op.removesuffix("-start")
            if op not in HLO_COLLECTIVES or ins.op.endswith("-done"):
                continue
            axes = None if axis_names is None else ",".join(spanned_axes(op, ins.attrs, shape, axis_names))
            if axes is not None:
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
            for elements, itemsize in result_arrays(ins):
                values += fraction * elements
                nbytes += fraction * elements * itemsize
                links += fraction * elements * hops
                # typeshed fixes a Counter's values to int; these are fractions
                census.values_by_op[op] += fraction * elements  # type: ignore[assignment]
                census.wire_by_op[op] += fraction * elements * itemsize  # type: ignore[assignment]
                if axes is not None:
                    census.values_by_axes.setdefault(axes, Counter())[op] += fraction * elements  # type: ignore[assignment]
                    census.wire_by_axes.setdefault(axes, Counter())[op] += fraction * elements * itemsize  # type: ignore[assignment]
    if census.unbounded:
        census.values_per_device = census.bytes_per_device = census.link_values_per_device = None
    else:
        census.values_per_device, census.bytes_per_device, census.link_values_per_device = values, nbytes, links
    return census


def permute_pairs(attrs: str) -> list[tuple[int, int]]:
    """A collective-permute's (source, target) device pairs."""
    match = _PAIRS_RE.search(attrs)
    return [(int(s), int(t)) for s, t in re.findall(r"\{(\d+),(\d+)\}", match.group(1))] if match else []


def _farthest_hops(attrs: str, mesh_shape: tuple[int, ...]) -> int:
    """The most links any source-target pair of a collective-permute crosses on a torus shaped
    like the mesh: per axis, the shorter way round its ring."""
    if not _PAIRS_RE.search(attrs):
        return 1
    return max((torus_hops(s, t, mesh_shape) for s, t in permute_pairs(attrs)), default=0)


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
    for group in device_groups(op, attrs, prod(mesh_shape)):
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


def device_groups(op: str, attrs: str, devices: int) -> list[list[int]]:
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


def result_arrays(ins: Instr) -> list[tuple[int, int]]:
    """(element count, item size) of each array a collective delivers: every member of a tuple
    result (a psum of several arrays, merged into one all-reduce, sends them all).

    An asynchronous ``-start`` op's result holds more than what it delivers. XLA:GPU's forms:
    ``all-gather-start`` is ``(operands, results)``, ``collective-permute-start`` is ``(operands,
    results, u32[], u32[])``, and an async-wrapped op printed as ``reduce-scatter-start`` or
    ``all-to-all-start`` is ``((operands...), results, context...)``: the results are the second
    member, itself a tuple where several arrays were combined (``((a, b), (a', b'))``).
    ``all-reduce-start`` delivers what it was given, so its result is the reduced array, or one
    member per operand (``(f32[2], f32[2]) all-reduce-start(p0, p1)``); older XLA also wrote it
    ``(operand, result, u32[], u32[])`` and, combined, ``((p0, p1), (r0, r1))``, whose results are
    again the second member. The ``-done`` op and ``async-start`` itself deliver nothing new: the
    collective an ``async-start`` wraps is counted in the computation it calls."""
    members = tuple_members(ins.result_type)
    if not ins.op.endswith("-start") or members is None:
        delivered = [ins.result_type]
    elif ins.op == "all-reduce-start" and not any(member.startswith("(") for member in members):
        delivered = members[: max(len(operands(ins)), 1)]
    else:
        delivered = members[1:2] or members
    return [(prod(dims), itemsize) for piece in delivered for dims, itemsize in arrays(piece)]


def group_size(attrs: str, partitions: int) -> int:
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
    n = group_size(attrs, partitions)
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op == "reduce-scatter":
        return float(n - 1)
    return (n - 1) / n  # all-gather, all-to-all: the result holds all n pieces
