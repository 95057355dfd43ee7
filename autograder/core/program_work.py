"""What each instruction of a compiled program does to one chip: its FLOPs and the bytes it moves
in HBM (``hbm_traffic.py``), per computation, a loop's body by its trip count. The overlap
(``overlap.py``) reads which work may run beside each collective from it; the roofline sums it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .flops import instruction_flops
from .hbm_traffic import Values, fused_body
from .hlo_text import Instr, Module, branches, callees, trip_count


@dataclass(frozen=True)
class Work:
    """What one run of an instruction (a loop: all its trips) costs one chip."""

    flops: float = 0.0
    bytes: float = 0.0

    def __add__(self, other: Work) -> Work:
        return Work(self.flops + other.flops, self.bytes + other.bytes)

    def times(self, n: int) -> Work:
        return Work(self.flops * n, self.bytes * n)


class ProgramWork:
    """Each instruction's work, computation by computation; a loop counted by its trip count, a
    conditional by its costliest branch (the busiest device's)."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self._scopes: dict[str, dict[str, Work] | None] = {}
        self._carried: dict[str, dict[int, int]] = {}  # a loop body's: each carried value's program width
        self._fused_users: dict[int, dict[str, list[Instr]]] = {}  # per fused computation, read once

    def total(self) -> Work | None:
        """The entry computation's work; None where a loop of unknown length does any."""
        if self.module.entry is None:
            return Work()
        return self.computation(self.module.entry)

    def computation(self, name: str) -> Work | None:
        each = self.instructions(name)
        if each is None:
            return None
        total = Work()
        for work in each.values():
            total += work
        return total

    def instructions(self, name: str) -> dict[str, Work] | None:
        """Each instruction of computation ``name`` (a loop body, a branch, the entry), by name."""
        if name not in self._scopes:
            self._scopes[name] = {}  # a computation that (wrongly) calls itself counts once
            self._scopes[name] = self._read(name)
        return self._scopes[name]

    def _read(self, name: str) -> dict[str, Work] | None:
        graph = Values(
            self.module.computations.get(name, []),
            self.module,
            self._carried.get(name, {}),
            self._fused_users,
            entry=name == self.module.entry,
        )
        out: dict[str, Work] = {}
        for ins in graph.instructions:
            if ins.op == "while":
                self._carry(ins, graph)
            inner = self._inner(ins)
            if inner is None:
                return None
            out[ins.name] = inner + Work(self._flops(ins, graph.types), graph.hbm_bytes(ins))
        return out

    def _carry(self, loop: Instr, graph: Values) -> None:
        """What a loop's body is given, at the program's widths: XLA:CPU carries a bfloat16 block
        through a loop as float32, widened once before it."""
        init = graph.by_name.get(loop.operands()[0]) if loop.operands() else None
        if init is None or init.op != "tuple":
            return
        widths = {i: int(graph.width(member)) for i, member in enumerate(init.operands())}
        for callee in re.findall(r"(?:body|condition)=%?([\w.\-]+)", loop.attrs):
            self._carried[callee] = {i: w for i, w in widths.items() if w}

    def _flops(self, ins: Instr, types: dict[str, str]) -> float:
        fused = fused_body(ins, self.module)
        if fused is None:
            return instruction_flops(ins, types)
        inner = {i.name: i.result_type for i in fused}
        return sum(instruction_flops(i, inner) for i in fused)

    def _inner(self, ins: Instr) -> Work | None:
        """The work of the computations ``ins`` runs as control flow (not a fusion's body, whose
        work is the fusion's own)."""
        if ins.op == "conditional":
            costs = [self.computation(b) for b in branches(ins)]
            if any(c is None for c in costs):
                return None
            return max((c for c in costs if c is not None), key=lambda w: (w.flops, w.bytes), default=Work())
        if ins.op == "while":
            body = re.search(r"body=%?([\w.\-]+)", ins.attrs)
            work = self.computation(body.group(1)) if body else Work()
            trips = trip_count(ins)
            if work is None or (trips is None and (work.flops or work.bytes)):
                return None
            return work.times(trips or 0)
        if ins.op in ("call", "async-start"):
            total = Work()
            for callee, _ in callees(ins):
                work = self.computation(callee)
                if work is None:
                    return None
                total += work
            return total
        return Work()
