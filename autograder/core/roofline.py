"""How long a program would take on a real machine, from what its compiled program spends on one
device: a roofline, which is a model and says so.

    total = per call + max(compute, memory) + each collective's time on the network - hidden

Compute is each kind of matmul's FLOPs at the chip's peak for its dtype, memory the bytes the
program moves in HBM at its own dtypes (``hbm_traffic.py``), each at the fraction of peak a real
chip reached (``calibration.py``, where one was measured); a collective takes what its algorithm
takes on the machine's network (``network.py``). Each collective, in turn, is given as much of
the work its dataflow lets run beside it (``overlap.py``) as covers its time, the work that
relieves the program's bottleneck first (a long matmul may cover several transfers, a share of
it each); the rest of the work runs as a roofline of its own. What is hidden is what that saves: max(compute, memory) less the rest's time. A piece of
work is given once, so memory traffic that runs beside a transfer does not also hide under the
matmuls. No contention between kernels, no launch gaps but the per-call one: a program the model
ranks faster is faster where those are alike.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from .calibration import Calibration, calibration_for, matmul_fraction
from .flops import dot_shares
from .hlo import Census, hlo_census, program_bytes_by_axes, stablehlo_itemsizes
from .hlo_text import parse_module
from .machines import Machine
from .network import collective_seconds
from .overlap import CollectiveRun, Scope, collectives
from .program_work import ProgramWork, Work
from .records import CollectiveRecord, CostRecord


@dataclass(frozen=True)
class Cost:
    """A program's resource signature as the model reads it, per device."""

    flops: float
    hbm_bytes: float  # bytes read and written in HBM at the program's dtypes (program_work.py)
    traffic: dict[str, float] = field(default_factory=dict)  # bytes sent over each set of mesh axes (ring algorithms)
    peak: int | None = None  # bytes at the program's peak
    dots: dict[str, float] = field(default_factory=dict)  # each kind of matmul's share of the FLOPs
    collectives: list[CollectiveRun] = field(default_factory=list)
    scopes: list[Scope] = field(default_factory=list)  # the computations that run them, with their work

    def beside(self, c: CollectiveRun) -> Work:
        """All the work a collective may run beside, per run."""
        total = Work()
        for k in c.beside:
            total += self.scopes[c.scope].work[k]
        return total

    def record(self) -> CostRecord:
        return {
            "flops": self.flops,
            "hbm_bytes": self.hbm_bytes,
            "traffic": dict(self.traffic),
            "peak": self.peak,
            "dots": dict(self.dots),
            "collectives": [_collective_record(c) for c in self.collectives],
            "scopes": [{"times": g.times, "work": [[w.flops, w.bytes] for w in g.work]} for g in self.scopes],
        }

    @classmethod
    def of(cls, record: CostRecord) -> Cost:
        runs = [
            CollectiveRun(
                c["kind"],
                list(c["axes"]),
                c["array_bytes"],
                c["times"],
                [(s, t) for s, t in c["pairs"]],
                c["scope"],
                tuple(c["beside"]),
            )
            for c in record["collectives"]
        ]
        scopes = [Scope(g["times"], tuple(Work(f, b) for f, b in g["work"])) for g in record["scopes"]]
        return cls(
            record["flops"],
            record["hbm_bytes"],
            dict(record["traffic"]),
            record["peak"],
            dict(record["dots"]),
            runs,
            scopes,
        )


def _collective_record(c: CollectiveRun) -> CollectiveRecord:
    return {
        "kind": c.kind,
        "axes": list(c.axes),
        "array_bytes": c.array_bytes,
        "times": c.times,
        "pairs": [[s, t] for s, t in c.pairs],
        "scope": c.scope,
        "beside": list(c.beside),
    }


@dataclass(frozen=True)
class Projection:
    machine: str
    compute_s: float
    memory_s: float
    links_s: dict[str, float]  # per set of mesh axes: its collectives' times on the network
    hidden_s: float  # communication run under other work
    fits: bool  # the peak fits one chip's memory
    per_call_s: float = 0.0  # a call's fixed cost (launch and wait), where one was measured
    calibrated: str = ""  # where the fractions of peak come from; "" for peak rates

    @property
    def communication_s(self) -> float:
        return sum(self.links_s.values())

    @property
    def total_s(self) -> float:
        return self.per_call_s + max(self.compute_s, self.memory_s) + self.communication_s - self.hidden_s

    @property
    def hidden_share(self) -> float:
        return self.hidden_s / self.communication_s if self.communication_s else 0.0


def project(cost: Cost, mesh: dict[str, int], machine: Machine) -> Projection:
    """``cost`` on ``machine``, whose chips take the mesh's devices in order."""
    if math.prod(mesh.values()) != machine.chips:
        raise ValueError(f"a mesh of {math.prod(mesh.values())} devices on {machine.name}'s {machine.chips} chips")
    rates = _Rates(cost.dots, machine, calibration_for(machine))
    compute, memory = rates.compute(cost.flops), rates.memory(cost.hbm_bytes)
    links: dict[str, float] = {}
    given = Work()
    left: dict[tuple[int, int], float] = {}  # (scope, work): the share of it not yet given

    def relief(k: int, scope: int) -> float:
        """How much of the program's bottleneck a piece of work takes away: its FLOPs' time where
        compute bounds the program, its bytes' where memory does."""
        work = cost.scopes[scope].work[k]
        return rates.compute(work.flops) if compute >= memory else rates.memory(work.bytes)

    for c in cost.collectives:
        seconds = collective_seconds(c.kind, c.axes, c.array_bytes, mesh, machine, c.pairs)
        key = ",".join(c.axes)
        links[key] = links.get(key, 0.0) + seconds * c.times
        need = seconds
        for k in sorted(c.beside, key=lambda k: -relief(k, c.scope)):
            work, at = cost.scopes[c.scope].work[k], (c.scope, k)
            took = min(left.get(at, 1.0), need / rates.seconds(work)) if need > 0 and rates.seconds(work) else 0.0
            if took > 0:
                left[at] = left.get(at, 1.0) - took
                need -= took * rates.seconds(work)
                given += Work(work.flops * took, work.bytes * took).times(c.times)
    rest = Work(max(cost.flops - given.flops, 0.0), max(cost.hbm_bytes - given.bytes, 0.0))
    hidden = max(0.0, max(compute, memory) - rates.seconds(rest))
    fits = cost.peak is None or cost.peak <= machine.hbm_bytes
    return Projection(
        machine.name,
        compute,
        memory,
        links,
        hidden,
        fits,
        rates.calibration.per_call_s if rates.calibration else 0.0,
        rates.calibration.source if rates.calibration else "",
    )


@dataclass(frozen=True)
class _Rates:
    """A machine's rates for one program: its matmuls' blend of peaks, its HBM, each at the
    fraction of peak its chip reached where one was measured."""

    dots: dict[str, float]
    machine: Machine
    calibration: Calibration | None

    @functools.cached_property
    def per_flop(self) -> float:
        """Seconds per FLOP: read once, as a projection asks for a time hundreds of times."""
        shares = self.dots or {"bf16": 1.0}
        return sum(
            share / self.machine.peak_flops(*_dtype_precision(kind)) / matmul_fraction(self.calibration, kind)
            for kind, share in shares.items()
        )

    def compute(self, flops: float) -> float:
        return flops * self.per_flop

    def memory(self, nbytes: float) -> float:
        return nbytes / self.machine.hbm_bytes_per_s / (self.calibration.memory if self.calibration else 1.0)

    def seconds(self, work: Work) -> float:
        return max(self.compute(work.flops), self.memory(work.bytes))


def _dtype_precision(kind: str) -> tuple[str, str]:
    dtype, _, precision = kind.partition(":")
    return dtype, precision or "default"


def cost_of(lowered: Any, compiled: Any, mesh: Any, census: Census | None = None) -> Cost:
    """A compiled program's cost on one device, read as the grader reads a submission's: FLOPs
    from its HLO (their dtypes from the lowered program), bytes per set of axes from its census
    (taken here unless given), memory traffic and each collective's overlap from its
    instructions."""
    hlo, stablehlo = compiled.as_text(), lowered.as_text()
    shape, names = tuple(mesh.devices.shape), tuple(mesh.axis_names)
    census = census or hlo_census(hlo, shape, names)
    itemsizes = stablehlo_itemsizes(stablehlo)
    traffic = program_bytes_by_axes(census, itemsizes)
    module = parse_module(hlo)
    work = ProgramWork(module)  # FLOPs and bytes in one reading, the FLOPs as flops.program_flops counts them
    total = work.total()
    if traffic is None or total is None:
        raise ValueError("a loop of unknown length: its cost cannot be projected")
    overlap = collectives(module, work, shape, names, itemsizes)
    return Cost(
        total.flops,
        total.bytes,
        traffic,
        peak_bytes(compiled),
        dot_shares(stablehlo),
        overlap.collectives,
        overlap.scopes,
    )


def peak_bytes(compiled: Any) -> int | None:
    """The most memory one device holds while the program runs, as XLA's buffer assignment
    plans it: its arguments, results and temporaries, less the results written over donated
    arguments. None where the backend does not say."""
    stats = compiled.memory_analysis()
    if stats is None:
        return None
    return int(
        stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes - stats.alias_size_in_bytes
    )


def at_peak(cost: Cost, machine: Machine) -> tuple[float, float]:
    """A program's compute and memory time at the chip's peaks, uncalibrated: what a
    calibration is fitted on (``calibration.fit``)."""
    rates = _Rates(cost.dots, machine, None)
    return rates.compute(cost.flops), rates.memory(cost.hbm_bytes)
