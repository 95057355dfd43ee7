"""Which work each collective may run beside: the work its dataflow lets run while it travels.

A collective hides under work that neither feeds it nor waits for it, in the computation it runs
in (the entry, or one trip of a loop's body): an all-gather whose result the first matmul needs
hides nothing; a ring's next transfer hides under the matmul of the block that just arrived; a
ring that sends every block before it multiplies hides nothing. This is what a scheduler that
overlaps everything the dataflow allows would reach, read from the compiled program (the
collectives the partitioner placed are there), never from its instruction order. A loop's
transfers hide only under the loop's own work. Which work each one is given, out of what it may
run beside, depends on the machine's rates: ``roofline.project`` deals it out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .hbm_traffic import COLLECTIVE_OPS, relabels
from .hlo import group_size, permute_pairs, result_arrays, spanned_axes
from .hlo_text import Instr, Module, multiplicities
from .program_work import ProgramWork, Work


@dataclass(frozen=True)
class CollectiveRun:
    """One collective of the program, as the network and the overlap read it."""

    kind: str  # HLO op: all-gather, reduce-scatter, all-reduce, all-to-all, collective-permute
    axes: list[str]  # the mesh axes its groups span
    array_bytes: float  # its full per-device array at the program's dtype (network.collective_seconds)
    times: int  # how often it runs
    pairs: list[tuple[int, int]]  # a permute's (source, target) devices
    scope: int  # its computation's index in ``Overlap.scopes``
    beside: tuple[int, ...]  # the work of that computation it may run beside, by index, in schedule order


@dataclass(frozen=True)
class Scope:
    """A computation that runs collectives: how often it runs, and each piece of its work."""

    times: int
    work: tuple[Work, ...]  # per run, in schedule order: the instructions that do any work


@dataclass(frozen=True)
class Overlap:
    collectives: list[CollectiveRun]
    scopes: list[Scope]


def collectives(
    module: Module,
    work: ProgramWork,
    mesh_shape: tuple[int, ...],
    axis_names: tuple[str, ...],
    itemsizes: dict[str, int],
) -> Overlap:
    """Every collective the program runs with the work it may run beside. ``itemsizes`` are the
    program's own bytes per value of each kind (``hlo.stablehlo_itemsizes``: XLA:CPU sends
    bfloat16 as float32)."""
    runs: list[CollectiveRun] = []
    scopes: list[Scope] = []
    if module.entry is None:
        return Overlap(runs, scopes)
    for name, times in multiplicities(module.computations, module.entry).items():
        instructions = module.computations[name]
        if not any(_kind(ins) for ins in instructions):
            continue
        each = work.instructions(name) or {}
        busy = [ins.name for ins in instructions if each.get(ins.name, Work()) != Work()]
        place = {name: k for k, name in enumerate(busy)}
        independent = _independent(instructions, lambda ins: relabels(ins, module))
        for ins in instructions:
            kind = _kind(ins)
            if not kind:
                continue
            runs.append(
                CollectiveRun(
                    kind,
                    spanned_axes(kind, ins.attrs, mesh_shape, axis_names),
                    _array_bytes(ins, kind, module.partitions, itemsizes),
                    times or 0,
                    permute_pairs(ins.attrs) if kind == "collective-permute" else [],
                    len(scopes),
                    tuple(sorted(place[n] for n in independent.get(ins.name, set()) if n in place)),
                )
            )
        scopes.append(Scope(times or 0, tuple(each[n] for n in busy)))
    return Overlap(runs, scopes)


def _kind(ins: Instr) -> str:
    """The collective ``ins`` starts or is ("" for anything else, and for the ``-done`` half)."""
    if ins.op.endswith("-done"):
        return ""
    op = ins.op.removesuffix("-start")
    return op if op in COLLECTIVE_OPS else ""


def _array_bytes(ins: Instr, kind: str, partitions: int, itemsizes: dict[str, int]) -> float:
    """The collective's full per-device array: an all-gather's result, a reduce-scatter's input
    (its result times the group), an all-reduce's, an all-to-all's or a permute's operand."""
    values = sum(elements for elements, _ in result_arrays(ins))
    wire = sum(elements * size for elements, size in result_arrays(ins))
    widest = max(itemsizes.values(), default=0)
    at_dtype = values * itemsizes.get(kind, widest) if itemsizes else wire
    return at_dtype * (group_size(ins.attrs, partitions) if kind == "reduce-scatter" else 1)


def _independent(instructions: list[Instr], relabel: Callable[[Instr], bool]) -> dict[str, set[str]]:
    """For each collective of one computation, the instructions it may run beside: neither before
    it nor after it in the dataflow (an asynchronous pair counts as its start: what waits for its
    done waits for it), and waiting for no collective that could still be on the links. The links
    carry one collective at a time, so work that waits for another collective runs beside this one
    only where that one goes first: it comes before this one, or something that uses this one's
    result needs it (an FSDP step's first gather goes before its second, whose matmul needs the
    first matmul)."""
    index = {ins.name: i for i, ins in enumerate(instructions)}
    before = [0] * len(instructions)  # bitsets of ancestors, in the schedule's (topological) order
    users: list[list[int]] = [[] for _ in instructions]
    for i, ins in enumerate(instructions):
        bits = 0
        for name in ins.operands():
            j = index.get(name)
            if j is not None and j < i:
                bits |= before[j] | (1 << j)
                users[j].append(i)
        before[i] = bits
    descendants = [0] * len(instructions)  # and of descendants, in reverse
    for i in reversed(range(len(instructions))):
        for user in users[i]:
            descendants[i] |= descendants[user] | (1 << user)
    collectives = sum(1 << i for i, ins in enumerate(instructions) if _kind(ins))
    everything = (1 << len(instructions)) - 1
    out: dict[str, set[str]] = {}
    for i, ins in enumerate(instructions):
        if not _kind(ins):
            continue
        after = descendants[i]
        first = before[i]  # collectives that go before this one: its ancestors, and what its users need
        for user in _users(i, users, instructions, relabel):
            first |= before[user]
        free = everything & ~before[i] & ~after & ~(1 << i)
        out[ins.name] = {instructions[j].name for j in _bits(free) if not (before[j] & collectives & ~first)}
    return out


def _bits(bits: int) -> list[int]:
    """The positions of a bitset's ones."""
    found = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return found


def _users(i: int, users: list[list[int]], instructions: list[Instr], relabel: Callable[[Instr], bool]) -> list[int]:
    """What uses a collective's result: through its ``-done`` where it is a ``-start``, and through
    what only relabels it (XLA:CPU converts a gathered bfloat16 block before its matmul)."""
    found, frontier = [], list(users[i])
    while frontier:
        user = frontier.pop()
        if instructions[user].op.endswith("-done") or relabel(instructions[user]):
            frontier += users[user]
        else:
            found.append(user)
    return found
