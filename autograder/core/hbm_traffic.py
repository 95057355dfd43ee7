"""The bytes an instruction of a compiled program reads and writes in HBM, at the program's own
dtypes, as a GPU or TPU would move them (``program_work.py`` sums them).

Read from XLA:CPU's optimized HLO, which is what the grader compiles, with its CPU habits taken
out (each rule says which):
- bfloat16 widened to float32 for arithmetic: a fusion that only converts is free, and a value
  is charged at the narrowest type its producer took it from or its every consumer converts it to
  (through a loop's carried values too);
- the CPU's layout and loop-carry ``copy`` instructions, its fusions that only convert, copy or
  transpose, bitcasts, tuples, constants and parameters move nothing (a GPU or TPU lays its
  arrays out as its matmuls want them);
- a dynamic-update-slice writes its update into its buffer in place (XLA:CPU widens the whole
  buffer around one; a GPU writes the update);
- but a copy of one of the program's arguments in the argument's own layout is the one every chip
  makes of an argument it writes into (in place, or carried through a loop) or returns without
  having been given it (not donated): that copy is charged, read and written (a decode step that
  does not donate its KV cache copies the whole cache for every token);
- a fusion that only slices an operand reads the slice, not the operand;
- a matmul inside one of XLA:CPU's fusions is a kernel of its own on a GPU: its result and its
  computed operands go through HBM.
A collective's bytes are the links' (``core/network.py``), never HBM's: its copies run at HBM
rates, an order above the links', while the bytes travel. A scalar is a register.
"""

from __future__ import annotations

import re
from math import prod

from .hlo_text import Instr, Module, arrays

COLLECTIVE_OPS = frozenset({"all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute"})
_FREE = frozenset(
    {
        "parameter",
        "constant",
        "tuple",
        "get-tuple-element",
        "bitcast",
        "copy",
        "copy-start",
        "copy-done",
        "opt-barrier",
        "after-all",
        "partition-id",
        "replica-id",
        "iota",
        "add-dependency",
    }
)
_PASS_THROUGH = frozenset({"bitcast", "convert", "reshape", "copy"})  # ops that only relabel or widen a value
_LAYOUT = _PASS_THROUGH | {"transpose"}
_SLICES = frozenset({"slice", "dynamic-slice"})


def relabels(ins: Instr, module: Module) -> bool:
    """Whether ``ins`` only changes a value's type, layout or shape (a bitcast, a copy, a
    convert, or a fusion of those): on a chip, the value itself."""
    body = fused_body(ins, module)
    return ins.op in _LAYOUT or (body is not None and _only_converts(body))


def fused_body(ins: Instr, module: Module) -> list[Instr] | None:
    """A fusion's computation, or None for any other instruction."""
    if ins.op != "fusion":
        return None
    called = re.search(r"\bcalls=%?([\w.\-]+)", ins.attrs)
    return module.computations.get(called.group(1), []) if called else []


class Values:
    """One computation's values: who makes each and who uses it, to charge each at the program's
    dtype rather than the CPU's."""

    def __init__(
        self,
        instructions: list[Instr],
        module: Module,
        carried: dict[int, int] | None = None,
        fused_users: dict[int, dict[str, list[Instr]]] | None = None,
        entry: bool = False,
    ) -> None:
        self.module, self.entry = module, entry
        self.fused_users = {} if fused_users is None else fused_users
        self._narrow: dict[str, int | None] = {}
        self.instructions = instructions
        self.carried = carried or {}  # a loop body's parameter: each member's program width
        self.by_name = {ins.name: ins for ins in instructions}
        self.types = {ins.name: ins.result_type for ins in instructions}
        self.users: dict[str, list[Instr]] = {}
        for ins in instructions:
            for name in ins.operands():
                self.users.setdefault(name, []).append(ins)

    def hbm_bytes(self, ins: Instr) -> float:
        """The bytes ``ins`` reads and writes in HBM, at the program's dtypes."""
        op = ins.op.removesuffix("-start").removesuffix("-done")
        if ins.op == "copy" and self._undonated(ins):
            return 2 * self.charged(ins.name)
        if ins.op in _FREE or op in COLLECTIVE_OPS or ins.op in _CONTROL or ins.op.startswith("async"):
            return 0.0
        if self._converts_only(ins):
            return 0.0  # the CPU's widening: a GPU computes in the narrow type or fuses the convert
        names = ins.operands()
        body = fused_body(ins, self.module)
        if body is None:
            if ins.op == "dynamic-update-slice" and len(names) > 1:
                return 2 * self.charged(names[1])  # read the update, write it in place
            if ins.op in _SLICES:
                return 2 * self.charged(ins.name)
            return sum(self.charged(n) for n in names) + self.charged(ins.name)
        params = _params(body)
        root = next((i for i in body if i.root), None)
        in_place, update = _in_place(root, body) if root else (None, None)
        written = self.charged(ins.name)
        if in_place is not None:  # the update's elements, at the buffer's charged width
            written = _elements(update.result_type if update else "") * self.width(ins.name)
        read = 0.0
        for index, name in enumerate(names):
            param = params.get(index)
            if param is not None and param.name == in_place:
                continue
            sliced = _sliced_elements(param, self.users_in(body)) if param is not None else None
            read += self.charged(name) if sliced is None else sliced * self.width(name)
        return read + written + self._between_kernels(body)

    def _undonated(self, ins: Instr) -> bool:
        """A copy of one of the program's arguments in the argument's own layout (not the CPU's
        relayout): one that was not donated, which the program writes into (in place, or as a
        loop's carried value) or returns, so that every chip copies it."""
        names = ins.operands()
        source = self.by_name.get(names[0]) if self.entry and names else None
        return source is not None and source.op == "parameter" and source.result_type == ins.result_type

    def charged(self, name: str) -> float:
        """A value's bytes at the narrowest type the program gave it."""
        return _elements(self.types.get(name, "")) * self.width(name)

    def width(self, name: str) -> float:
        own = _first_itemsize(self.types.get(name, "")) or 0
        narrow = self._narrowest(name)
        return min(own, narrow) if narrow else own

    def _converts_only(self, ins: Instr) -> bool:
        body = fused_body(ins, self.module)
        return ins.op == "convert" or (body is not None and _only_converts(body))

    def _narrowest(self, name: str) -> int | None:
        """The item size this value stands for: its source's where a pure convert made it, else
        the one its every user converts it to."""
        if name not in self._narrow:
            self._narrow[name] = self._read_narrowest(name)
        return self._narrow[name]

    def _read_narrowest(self, name: str) -> int | None:
        ins = self.by_name.get(name)
        if ins is not None and ins.op == "get-tuple-element" and self.carried:
            carrier = self.by_name.get(ins.operands()[0]) if ins.operands() else None
            index = re.search(r"index=(\d+)", ins.attrs)
            if carrier is not None and carrier.op == "parameter" and index:
                return self.carried.get(int(index.group(1)))
        if ins is not None and self._converts_only(ins) and len(ins.operands()) == 1:
            source = ins.operands()[0]
            return self._narrowest(source) or _first_itemsize(self.types.get(source, ""))
        body = fused_body(ins, self.module) if ins is not None else None
        root = next((i for i in body if i.root), None) if body else None
        if root is not None:  # a fusion whose result the CPU widened last, from a narrower type
            own = _first_itemsize(root.result_type) or 0
            chained = _chain_width(root, {i.name: i for i in body or []})
            if chained < own:
                return int(chained)
        users = self.users.get(name, [])
        narrowed = [self._converted_by(name, user) for user in users]
        if users and all(n is not None for n in narrowed):
            return max(n for n in narrowed if n is not None)
        return None

    def _converted_by(self, name: str, user: Instr) -> int | None:
        """The narrower item size ``user`` converts this value to before anything else, if any."""
        own = _first_itemsize(self.types.get(name, "")) or 0
        if user.op == "convert":
            size = _first_itemsize(user.result_type) or 0
            return size if size < own else None
        body = fused_body(user, self.module)
        if body is None:
            return None
        params = _params(body)
        users = self.users_in(body)
        sizes = [_converted_in(params[i], users) for i, n in enumerate(user.operands()) if n == name and i in params]
        if not sizes or any(s is None or s >= own for s in sizes):
            return None
        return max(s for s in sizes if s is not None)

    def _between_kernels(self, body: list[Instr]) -> float:
        """What a GPU writes and reads again inside one of XLA:CPU's fusions: a matmul is a kernel of
        its own, so its result goes to HBM before anything else uses it, and an operand computed in
        the fusion comes from HBM (XLA:CPU fuses a whole attention into one loop nest; a GPU without
        a fused attention kernel writes the scores and reads them back)."""
        graph = Values(body, self.module, fused_users=self.fused_users)
        by_name, total = {i.name: i for i in body}, 0.0
        for ins in body:
            if ins.op not in ("dot", "convolution"):
                continue
            if not ins.root and not _feeds_root_only(ins, graph.users):
                total += 2 * _elements(ins.result_type) * graph.width(ins.name)
            for name in ins.operands():
                made = _strip(by_name[name], by_name) if name in by_name else None
                if made is not None and made.op not in ("parameter", "constant", "broadcast", "iota"):
                    total += (
                        2
                        * _elements(by_name[name].result_type)
                        * min(_chain_width(by_name[name], by_name), graph.width(made.name))
                    )
        return total

    def users_in(self, body: list[Instr]) -> dict[str, list[Instr]]:
        """Who uses each value of a fused computation (read once per program)."""
        if id(body) not in self.fused_users:
            self.fused_users[id(body)] = _users(body)
        return self.fused_users[id(body)]


_CONTROL = frozenset({"while", "conditional", "call"})


def _params(body: list[Instr]) -> dict[int, Instr]:
    found = {}
    for ins in body:
        if ins.op == "parameter":
            index = re.match(r"\s*(\d+)", ins.attrs)
            if index:
                found[int(index.group(1))] = ins
    return found


def _only_converts(body: list[Instr]) -> bool:
    """A fusion that only converts, copies, transposes or reshapes: the CPU's change of a value's
    type or layout, which a chip that computes in that type, with layouts of its own, skips."""
    return all(i.op == "parameter" or i.op in _LAYOUT for i in body)


def _strip(ins: Instr, body: dict[str, Instr]) -> Instr:
    """Through converts, bitcasts and reshapes to what made the value."""
    while ins.op in _PASS_THROUGH and ins.operands() and ins.operands()[0] in body:
        ins = body[ins.operands()[0]]
    return ins


def _in_place(root: Instr, body: list[Instr]) -> tuple[str | None, Instr | None]:
    """The parameter a fusion whose result is a dynamic-update-slice writes into in place, and
    its update; (None, None) for any other fusion."""
    by_name = {i.name: i for i in body}
    made = _strip(root, by_name)
    names = made.operands()
    if made.op != "dynamic-update-slice" or len(names) < 2 or names[0] not in by_name:
        return None, None
    buffer = _strip(by_name[names[0]], by_name)
    return (buffer.name, by_name.get(names[1])) if buffer.op == "parameter" else (None, None)


def _feeds_root_only(ins: Instr, users: dict[str, list[Instr]]) -> bool:
    """Whether a value reaches the fusion's result through converts and bitcasts alone."""
    current = ins
    while True:
        following = users.get(current.name, [])
        if len(following) != 1 or following[0].op not in _PASS_THROUGH:
            return False
        current = following[0]
        if current.root:
            return True


def _chain_width(ins: Instr, by_name: dict[str, Instr]) -> float:
    """The narrowest item size along a value's converts back to what made it."""
    width = _first_itemsize(ins.result_type) or 0
    while ins.op in _PASS_THROUGH and ins.operands() and ins.operands()[0] in by_name:
        ins = by_name[ins.operands()[0]]
        width = min(width, _first_itemsize(ins.result_type) or width)
    return width


def _users(body: list[Instr]) -> dict[str, list[Instr]]:
    users: dict[str, list[Instr]] = {}
    for ins in body:
        for name in ins.operands():
            users.setdefault(name, []).append(ins)
    return users


def _converted_in(param: Instr, users: dict[str, list[Instr]]) -> int | None:
    """The item size a fused parameter is converted to first, where every use converts it."""
    sizes, frontier = list[int](), [param.name]
    while frontier:
        for user in users.get(frontier.pop(), []):
            size = _first_itemsize(user.result_type) if user.op == "convert" else None
            if size is not None:
                sizes.append(size)
            elif user.op in ("bitcast", "reshape"):
                frontier.append(user.name)
            else:
                return None
    return max(sizes) if sizes else None


def _sliced_elements(param: Instr, users: dict[str, list[Instr]]) -> float | None:
    """The elements a fusion reads of a parameter it uses only through slices (as their
    operand, not their index); None where it uses more of it."""
    total, frontier = 0.0, [param.name]
    while frontier:
        value = frontier.pop()
        for user in users.get(value, []):
            if user.op in _SLICES and user.operands()[0] == value:
                total += _elements(user.result_type)
            elif user.op in _PASS_THROUGH:
                frontier.append(user.name)
            elif user.op not in _SLICES:
                return None
    return total or None


def _elements(type_text: str) -> float:
    """The elements of a type's arrays; a scalar's none (a loop's counter, a reduction's total:
    registers, not traffic)."""
    return float(sum(prod(dims) for dims, _ in arrays(type_text) if dims))


def _first_itemsize(type_text: str) -> int | None:
    found = arrays(type_text)
    return found[0][1] if found else None
