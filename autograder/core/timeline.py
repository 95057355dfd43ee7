"""What every device sends, receives and multiplies at each step of a compiled program, read by
running its dataflow on labels instead of numbers.

Each device's inputs are labelled with that device's number. An instruction's result carries the
labels of what it was made from; a collective-permute hands its source's labels to its target; an
all-to-all hands each piece to the device it is for. So a ring that forwards the block it received
is told apart from one that sends its own block each time, though both send along the same pairs.
The steps are the program's permutes, all-to-alls and library collectives (all-gather, all-reduce,
reduce-scatter: each device's operand to every other of its group) in the order it runs them (a
loop's body once per trip). Labels are coarse inside an instruction (a slice of a gathered array carries every block
of it), never missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import records
from .flops import is_matmul
from .hlo import device_groups
from .hlo_text import Instr, branches, callees, operands, parse_module, trip_count, tuple_members

# A bitmask: bit d is set where device d's inputs went into a value, and bit devices + k where the
# value waited for step k's transfer (a matmul is drawn at the last step it waits for).
Origins = int
Value = Origins | tuple["Value", ...]
Each = list[Value]  # one value per device

STEPS_KEPT = 64  # steps a picture draws at most
INSTRUCTIONS_READ = 200_000  # a program longer than this to follow is drawn up to where it got
_SOURCES = frozenset({"constant", "iota", "partition-id", "replica-id", "after-all", "rng-get-and-update-state"})
_GATHERING = ("all-gather", "all-reduce", "reduce-scatter", "collective-broadcast")
_COMMENT = re.compile(r"/\*.*?\*/")


def timeline(hlo_text: str) -> records.Timeline | None:
    """The steps of a compiled SPMD program, each device's view of them; None where it has no
    collective (a library one, all-gather or all-reduce, is one step of its own)."""
    if not any(kind in hlo_text for kind in ("collective-permute", "all-to-all", *_GATHERING)):
        return None  # nothing to draw: skip reading the program
    module = parse_module(hlo_text)
    if module.entry is None:
        return None
    reader = _Reader(module.computations, module.partitions)
    try:
        reader.computation(module.entry, [[1 << d for d in range(reader.devices)]] * _arity(reader, module.entry))
    except _Stop:
        pass  # what was read up to here stands
    return reader.record() if reader.kinds else None


class _Stop(Exception):
    """The picture is full, or the program is too long to follow (or loops an unknown number of
    times): the steps read so far stand."""


def _arity(reader: _Reader, name: str) -> int:
    return sum(ins.op == "parameter" for ins in reader.comps.get(name, []))


def _operand_name(piece: str) -> str:
    """An operand's name as printed: ``f32[2]{0} %a``, ``/*index=5*/%a``, or ``a`` (XLA's tests)."""
    return _COMMENT.sub(" ", piece).split()[-1].lstrip("%")


def _flat(value: Value) -> Origins:
    if isinstance(value, int):
        return value
    out = 0
    for member in value:
        out |= _flat(member)
    return out


def _shaped(result_type: str, origins: Origins) -> Value:
    """``origins`` in the shape of ``result_type``: one label per tuple member."""
    members = tuple_members(result_type)
    return origins if members is None else tuple(_shaped(m, origins) for m in members)


@dataclass
class _Reader:
    comps: dict[str, list[Instr]]
    devices: int
    left: int = INSTRUCTIONS_READ
    kinds: list[str] = field(default_factory=list)
    pairs: list[list[tuple[int, int]]] = field(default_factory=list)
    carried: list[list[Origins]] = field(default_factory=list)
    # per slot (before the first step, then after each): per device, the labels its matmuls read
    computes: list[list[Origins | None]] = field(init=False)
    _multiplies: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.computes = [[None] * self.devices]

    def record(self) -> records.Timeline:
        def devices(origins: Origins) -> list[int]:
            return [d for d in range(self.devices) if origins >> d & 1]

        return {
            "kinds": self.kinds,
            "steps": [[[s, t] for s, t in pairs] for pairs in self.pairs],
            "carried": [[devices(c) for c in step] for step in self.carried],
            "computes": [[None if c is None else devices(c) for c in slot] for slot in self.computes],
        }

    def computation(self, name: str, args: list[Each]) -> Each:
        env: dict[str, Each] = {}
        instructions = self.comps.get(name, [])
        for ins in instructions:
            self.left -= 1
            if self.left < 0:
                raise _Stop
            nothing: Each = [0] * self.devices
            named = [_operand_name(piece) for piece in operands(ins)]
            env[ins.name] = self.instruction(ins, [env.get(o, nothing) for o in named], args)
        root = next((ins.name for ins in instructions if ins.root), instructions[-1].name if instructions else "")
        return env.get(root, [0] * self.devices)

    def instruction(self, ins: Instr, ops: list[Each], args: list[Each]) -> Each:
        op, n = ins.op, self.devices
        if op == "parameter":
            index = int(re.match(r"\s*(\d+)", ins.attrs).group(1))  # type: ignore[union-attr]  # parameter(N)
            return args[index] if index < len(args) else [0] * n
        if op in _SOURCES:
            return [0] * n
        if op == "tuple":
            return [tuple(o[d] for o in ops) for d in range(n)]
        if op == "get-tuple-element":
            k = int(re.search(r"index=(\d+)", ins.attrs).group(1))  # type: ignore[union-attr]
            return [v[k] if isinstance(v, tuple) and k < len(v) else _flat(v) for v in ops[0]]
        if op == "async-update" or op.endswith("-done"):  # what its -start (run already) delivers
            return ops[0]
        if op == "while":
            return self._loop(ins, ops)
        if op == "conditional":
            outs = [self.computation(b, [ops[i + 1]] if i + 1 < len(ops) else []) for i, b in enumerate(branches(ins))]
            return [_shaped(ins.result_type, _union(o[d] for o in outs)) for d in range(n)]
        if op in ("call", "call-start", "async-start"):
            return self.computation(callees(ins)[0][0], ops) if callees(ins) else self._mixed(ins, ops)
        if op.removesuffix("-start") == "collective-permute":
            return self._permute(ins, ops)
        if op == "all-to-all":
            return self._all_to_all(ins, ops)
        if op.removesuffix("-start") in _GATHERING:
            return self._gathered(ins, ops)
        if is_matmul(ins) or (op == "fusion" and any(self._multiplies_in(c) for c, _ in callees(ins))):
            self._multiply([_union(o[d] for o in ops) for d in range(n)])
        return self._mixed(ins, ops)

    def _multiply(self, read: list[Origins]) -> None:
        """A matmul, drawn after the last step whose transfer it waits for: when it could start,
        whatever order this backend's scheduler put it in."""
        for d, origins in enumerate(read):
            slot = self.computes[(origins >> self.devices).bit_length()]
            slot[d] = (slot[d] or 0) | origins

    def _mixed(self, ins: Instr, ops: list[Each]) -> Each:
        """An instruction that mixes its operands on each device."""
        return [_shaped(ins.result_type, _union(o[d] for o in ops)) for d in range(self.devices)]

    def _loop(self, ins: Instr, ops: list[Each]) -> Each:
        body, trips = re.search(r"body=%?([\w.\-]+)", ins.attrs), trip_count(ins)
        if body is None or trips is None:
            raise _Stop
        state = ops[0]
        for _ in range(trips):
            state = self.computation(body.group(1), [state])
        return state

    def _permute(self, ins: Instr, ops: list[Each]) -> Each:
        pairs = [(s, t) for s, t in device_groups("collective-permute", ins.attrs, self.devices)]
        sent = [_flat(v) for v in ops[0]]
        arrived = self._step("collective-permute", pairs, [sent[s] for s, _ in pairs])
        received = [0] * self.devices
        for s, t in pairs:
            received[t] |= sent[s] | arrived
        return [_shaped(ins.result_type, r) if ins.op == "collective-permute" else r for r in received]

    def _all_to_all(self, ins: Instr, ops: list[Each]) -> Each:
        """Operand j of each device goes to the j-th device of its group (the array form splits
        one operand: each piece then carries all of it)."""
        received: Each = [0] * self.devices
        pairs, carried = [], []
        for group in device_groups("all-to-all", ins.attrs, self.devices):
            for t_index, t in enumerate(group):
                pieces = [_flat(ops[t_index if len(ops) > 1 else 0][s]) for s in group]
                received[t] = tuple(pieces) if len(ops) > 1 else _union(pieces)
                pairs += [(s, t) for s in group if s != t]
                carried += [piece for s, piece in zip(group, pieces) if s != t]
        arrived = self._step("all-to-all", pairs, carried)
        return [_arrived(v, arrived) for v in received]

    def _gathered(self, ins: Instr, ops: list[Each]) -> Each:
        """A library collective, one step: each device of a group sends what its operands were
        made from to every other, and each receives all of the group's (however the library
        routes it, ring or tree, that is what arrives)."""
        kind = ins.op.removesuffix("-start")
        out: Each = [0] * self.devices
        pairs, carried, mixed = [], [], {}
        for group in device_groups(kind, ins.attrs, self.devices):
            mine = {d: _union(o[d] for o in ops) for d in group}
            pairs += [(s, t) for t in group for s in group if s != t]
            carried += [mine[s] for t in group for s in group if s != t]
            mixed.update({d: _union(mine.values()) for d in group})
        arrived = self._step(kind, pairs, carried) if pairs else 0
        for d, origins in mixed.items():
            out[d] = _shaped(ins.result_type, origins | arrived)
        return out

    def _step(self, kind: str, pairs: list[tuple[int, int]], carried: list[Origins]) -> Origins:
        """Records a step; the label of having waited for it."""
        if len(self.kinds) == STEPS_KEPT:
            raise _Stop
        self.kinds.append(kind)
        self.pairs.append(pairs)
        self.carried.append(carried)
        self.computes.append([None] * self.devices)
        return 1 << (self.devices + len(self.kinds) - 1)

    def _multiplies_in(self, name: str) -> bool:
        """Whether computation ``name`` (a fusion's body, say) runs a matmul, itself or deeper."""
        if name not in self._multiplies:
            self._multiplies[name] = False  # a computation that (wrongly) calls itself
            self._multiplies[name] = any(
                is_matmul(i) or any(self._multiplies_in(c) for c, _ in callees(i)) for i in self.comps.get(name, [])
            )
        return self._multiplies[name]


def _arrived(value: Value, step: Origins) -> Value:
    return value | step if isinstance(value, int) else tuple(_arrived(v, step) for v in value)


def _union(values: object) -> Origins:
    out = 0
    for value in values:  # type: ignore[attr-defined]
        out |= _flat(value)
    return out
