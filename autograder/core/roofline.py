"""How long a program would take on a real machine, from what its compiled program spends on one
device: a roofline, which is a model and says so. Compute at the chip's peak, memory traffic at
its HBM's, and the bytes sent over each set of mesh axes at the rate of the slowest link they
cross, each shown apart; communication the program's dataflow lets run under compute is hidden
behind it, up to the compute's own time. No latency, no contention, no kernel efficiency:
a program that a model ranks faster is faster only where those are alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .flops import program_flops
from .hlo import Census, hlo_census, program_bytes_by_axes, stablehlo_itemsizes
from .machines import Link, Machine
from .records import CostRecord


@dataclass(frozen=True)
class Cost:
    """A program's resource signature as the model reads it, per device."""

    flops: float
    hbm_bytes: float  # bytes read and written in HBM (buffer_traffic)
    traffic: dict[str, float] = field(default_factory=dict)  # bytes sent over each set of mesh axes
    peak: int | None = None  # bytes at the program's peak
    overlap: float = 0.0  # the share of the communication that may run under compute (0 to 1)

    def record(self) -> CostRecord:
        return {
            "flops": self.flops,
            "hbm_bytes": self.hbm_bytes,
            "traffic": dict(self.traffic),
            "peak": self.peak,
            "overlap": self.overlap,
        }

    @classmethod
    def of(cls, record: CostRecord) -> Cost:
        return cls(record["flops"], record["hbm_bytes"], dict(record["traffic"]), record["peak"], record["overlap"])


@dataclass(frozen=True)
class Projection:
    machine: str
    compute_s: float
    memory_s: float
    links_s: dict[str, float]  # per set of mesh axes: its bytes at its slowest link's rate
    hidden_s: float  # communication run under compute
    fits: bool  # the peak fits one chip's memory

    @property
    def communication_s(self) -> float:
        return sum(self.links_s.values())

    @property
    def total_s(self) -> float:
        return max(self.compute_s, self.memory_s) + self.communication_s - self.hidden_s

    @property
    def hidden_share(self) -> float:
        return self.hidden_s / self.communication_s if self.communication_s else 0.0


def project(cost: Cost, mesh: dict[str, int], machine: Machine) -> Projection:
    """``cost`` on ``machine``, whose chips take the mesh's devices in order."""
    if math.prod(mesh.values()) != machine.chips:
        raise ValueError(f"a mesh of {math.prod(mesh.values())} devices on {machine.name}'s {machine.chips} chips")
    if not 0.0 <= cost.overlap <= 1.0:
        raise ValueError(f"overlap {cost.overlap}: a share, from 0 to 1")
    compute, memory = cost.flops / machine.flops_per_s, cost.hbm_bytes / machine.hbm_bytes_per_s
    links = {axes: sent / link_for(mesh, axes, machine).bytes_per_s for axes, sent in cost.traffic.items()}
    hidden = cost.overlap * min(sum(links.values()), max(compute, memory))
    fits = cost.peak is None or cost.peak <= machine.hbm_bytes
    return Projection(machine.name, compute, memory, links, hidden, fits)


def link_for(mesh: dict[str, int], axes: str, machine: Machine) -> Link:
    """The slowest link a collective over ``axes`` ("data" or "data,model") crosses: between
    hosts where any of its groups spans two, else within one."""
    if machine.across_hosts is None or not crosses_hosts(mesh, axes.split(","), machine.per_host):
        return machine.within_host
    return machine.across_hosts


def crosses_hosts(mesh: dict[str, int], axes: list[str], per_host: int) -> bool:
    """Whether a group of devices that differ only along ``axes`` holds devices of two hosts,
    device ``i`` being on host ``i // per_host``."""
    names = list(mesh)
    unknown = set(axes) - set(names)
    if unknown:
        raise ValueError(f"no mesh axis {', '.join(sorted(unknown))} in {names}")
    hosts = np.arange(math.prod(mesh.values())).reshape(tuple(mesh.values())) // per_host
    inner = [names.index(a) for a in axes]
    outer = [i for i in range(len(names)) if i not in inner]
    groups = np.transpose(hosts, outer + inner).reshape(-1, math.prod(mesh[a] for a in axes))
    return bool((groups != groups[:, :1]).any())


def cost_of(lowered: Any, compiled: Any, mesh: Any, overlap: float = 0.0, census: Census | None = None) -> Cost:
    """A compiled program's cost on one device, read as the grader reads a submission's: FLOPs
    from its HLO, bytes per set of axes from its census (taken here unless given), memory
    traffic from its buffers."""
    hlo = compiled.as_text()
    census = census or hlo_census(hlo, tuple(mesh.devices.shape), tuple(mesh.axis_names))
    traffic = program_bytes_by_axes(census, stablehlo_itemsizes(lowered.as_text()))
    flops = program_flops(hlo)
    if traffic is None or flops is None:
        raise ValueError("a loop of unknown length: its cost cannot be projected")
    return Cost(flops, buffer_traffic(compiled), traffic, peak_bytes(compiled), overlap)


def buffer_traffic(compiled: Any) -> float:
    """The bytes a program moves through memory, by its buffers: its arguments read once, its
    results written once, each temporary written once and read once (XLA's buffer assignment).
    Not XLA:CPU's count of the bytes each instruction touches, which holds the CPU's own copies
    and bfloat16 widened to float32: what a GPU would not move."""
    stats = compiled.memory_analysis()
    if stats is None:
        analysis = compiled.cost_analysis()
        analysis = analysis[0] if isinstance(analysis, list) else analysis
        return float(analysis.get("bytes accessed", 0.0))
    return float(stats.argument_size_in_bytes + stats.output_size_in_bytes + 2 * stats.temp_size_in_bytes)


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
