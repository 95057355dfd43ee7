"""How long one collective takes on a machine's network (``machines.py``), bandwidth only: no
latency per hop or call. Each formula stands beside How to Scale Your Model's
(jax-ml.github.io/scaling-book; "the book"), whose W is one link's one-way rate.

Mesh devices are numbered row-major over the mesh's axes, in order. On GPUs, device ``i`` is on
host ``i // per_host``. On a TPU grid, device ``i`` is chip ``placement[i]``: on the v5e-8, as
``jax.make_mesh`` places 8 v5e chips, mesh devices 0..7 run round the 2 x 4 grid's ring (row 0
left to right, then row 1 right to left). So a mesh axis of 8 is that ring; the last axis of 4 of
a 2 x 4 mesh is a row (a line: no wraparound); the last axis of 2 of a 4 x 2 mesh pairs
neighbours in a row; the leading axis of 2 of a 2 x 4 mesh pairs chips 2 to 4 hops apart, whose
routes share links.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache
from itertools import pairwise, permutations

import numpy as np

from .machines import Grid, Machine, Switched

KINDS = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all", "collective-permute")
Pair = tuple[int, int]
_Link = tuple[tuple[int, int], tuple[int, int]]  # from one chip's (row, column) to its neighbour's


def collective_seconds(
    kind: str,
    axes: list[str],
    array_bytes: float,
    mesh: dict[str, int],
    machine: Machine,
    pairs: list[Pair] | None = None,
) -> float:
    """The time of one collective ``kind`` (HLO's name) whose groups span ``axes``. ``array_bytes``
    is its full per-device array: an all-gather's gathered result, a reduce-scatter's input, an
    all-reduce's, an all-to-all's or a permute's operand; ``pairs`` are a permute's (source,
    target) devices."""
    if kind not in KINDS:
        raise ValueError(f"unknown collective {kind!r}: one of {', '.join(KINDS)}")
    groups = groups_along(mesh, axes)
    if len(groups) * len(groups[0]) != machine.chips:
        raise ValueError(f"a mesh of {len(groups) * len(groups[0])} devices on {machine.name}'s {machine.chips} chips")
    if kind == "collective-permute" and pairs is None:
        raise ValueError("a collective-permute needs its (source, target) pairs")
    sends = [(s, t) for s, t in pairs or [] if s != t]
    if len(groups[0]) == 1 or array_bytes == 0 or (kind == "collective-permute" and not sends):
        return 0.0
    if isinstance(machine.network, Grid):
        return _on_grid(kind, groups, array_bytes, machine.network, sends)
    return _on_switches(kind, groups, array_bytes, machine.network, machine.per_host, sends)


def groups_along(mesh: dict[str, int], axes: list[str]) -> list[list[int]]:
    """The groups of devices that differ only along ``axes``, each in the mesh's order."""
    names = list(mesh)
    unknown = sorted(set(axes) - set(names))
    if unknown:
        raise ValueError(f"no mesh axis {', '.join(unknown)} in {names}")
    inner = [i for i, name in enumerate(names) if name in axes]
    outer = [i for i in range(len(names)) if i not in inner]
    ids = np.arange(math.prod(mesh.values())).reshape(tuple(mesh.values()))
    rows = np.transpose(ids, outer + inner).reshape(-1, math.prod(mesh[names[i]] for i in inner))
    return [[int(d) for d in row] for row in rows]


def _on_switches(
    kind: str, groups: list[list[int]], nbytes: float, network: Switched, per_host: int, sends: list[Pair]
) -> float:
    """NCCL's algorithms on GPUs. Inside a host NVSwitch carries every pair at NVLink's whole
    rate W: the book's GPU chapter gives an AllGather (N - 1)/N * bytes / W, an AllToAll
    (N - 1)/N^2 * bytes / W (bytes = N * A here). A group over h hosts of ``local`` GPUs each runs
    hierarchically, NVLink and each GPU's own NIC at once: the book's max over levels of
    bytes * (D - 1)/(D * W_level), D = local at the host (W = NVLink), D = h above it (W = the
    host's NICs, local * W_nic); its AllToAll over M hosts, bytes * (M - 1)/(M^2 * W_node egress),
    is (n - local)/n * A / W_nic per GPU."""
    if kind == "collective-permute":
        crosses = any(s // per_host != t // per_host for s, t in sends)
        link = network.nic if crosses and network.nic else network.nvlink
        return nbytes / link.bytes_per_s  # every device sends its whole operand
    n = len(groups[0])
    hosts = len({d // per_host for d in groups[0]})
    local = n // hosts  # a mesh laid row-major over equal hosts puts as many of a group on each
    nic, nvlink = {  # the shares of A one GPU sends over its NIC and over NVLink
        "all-gather": ((hosts - 1) / n, (local - 1) / local),
        "reduce-scatter": ((hosts - 1) / n, (local - 1) / local),
        "all-reduce": (2 * (hosts - 1) / n, 2 * (local - 1) / local),  # a reduce-scatter, then an all-gather
        "all-to-all": ((n - local) / n, (local - 1) / n),  # each piece straight to its target
    }[kind]
    seconds = nvlink * nbytes / network.nvlink.bytes_per_s
    return max(seconds, nic * nbytes / network.nic.bytes_per_s) if network.nic else seconds


def _on_grid(kind: str, groups: list[list[int]], nbytes: float, grid: Grid, sends: list[Pair]) -> float:
    """Sends routed on the grid, each set of concurrent ones taking its bytes times the most of
    them that share one directed link (the busiest link), over W."""
    rate = grid.link.bytes_per_s
    if kind == "collective-permute":
        return nbytes * _busiest(grid, sends) / rate
    n = len(groups[0])
    if kind == "all-to-all":
        # every device sends each other member its n-th; on a ring or a line the busiest links
        # are the middle cut's, the book's bisection bound: (n/2)^2 pieces of A/n each way over 2
        # links (a ring: the book's AllGather / 4) or 1 (a line)
        every = [(s, t) for group in groups for s in group for t in group if s != t]
        return nbytes / n * _busiest(grid, every) / rate
    # n - 1 steps of the ring algorithm, each member passing half a piece to the next and half to
    # the one before: the book's AllGather over a ring of 1-hop links, (n - 1)/n * A / (2W); on a
    # line the ring closes back along it, so the end links carry both halves, (n - 1)/n * A / W;
    # an all-reduce is a reduce-scatter and an all-gather, twice either
    rings = [_ring_order(grid, tuple(group)) for group in groups]
    forward = [(ring[k], ring[(k + 1) % n]) for ring in rings for k in range(n)]
    step = nbytes / (2 * n) * _busiest(grid, forward + [(t, s) for s, t in forward])
    return (2 if kind == "all-reduce" else 1) * (n - 1) * step / rate


@cache
def _ring_order(grid: Grid, group: tuple[int, ...]) -> tuple[int, ...]:
    """The order a ring algorithm takes a group's chips in: round a cycle of 1-hop links where
    the group has one (all 8 of a 2 x 4 grid: its edge), else along a path of them, else as the
    mesh numbers them."""

    def linked(order: tuple[int, ...], closed: bool) -> bool:
        steps = zip(order, order[1:] + order[:1] if closed else order[1:])
        return all(len(_route(grid, a, b)) == 1 for a, b in steps)

    cycles = (order for order in permutations(group) if order[0] == group[0] and linked(order, True))
    paths = (order for order in permutations(group) if linked(order, False))
    return next(cycles, None) or next(paths, None) or group


def _busiest(grid: Grid, sends: list[Pair]) -> int:
    """The most of ``sends`` whose routes cross one directed link."""
    load = Counter(link for s, t in sends for link in _route(grid, s, t))
    return max(load.values(), default=0)


def _route(grid: Grid, source: int, target: int) -> list[_Link]:
    """The links from one mesh device's chip to another's, dimension-ordered (assumed): along
    the row to the target's column, then along the column."""
    (row, col), (to_row, to_col) = (divmod(grid.placement[d], grid.shape[1]) for d in (source, target))
    cells = [(row, col)]
    while cells[-1][1] != to_col:
        cells.append((row, cells[-1][1] + (1 if to_col > col else -1)))
    while cells[-1][0] != to_row:
        cells.append((cells[-1][0] + (1 if to_row > row else -1), to_col))
    return list(pairwise(cells))
