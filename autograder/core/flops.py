"""FLOPs one device runs, read from the compiled HLO: every dot and convolution at two FLOPs per
multiply-add (a ``(m, k) @ (k, n)`` is ``2mkn``), inside fusions and called computations, a loop's
body counted by its trip count and a conditional by its costliest branch (the busiest device's).

Elementwise work is left out, as a model's FLOPs usually leave it out: the matmuls are what a
parallel technique divides among the devices, and two honest spellings of the same elementwise
work differ more than two techniques do.
"""

from __future__ import annotations

import re
from math import prod

from .hlo_text import Instr, Module, arrays, branches, callees, operands, parse_module

_CONTRACTING_RE = re.compile(r"lhs_contracting_dims=\{([\d,]*)\}")
_DIM_LABELS_RE = re.compile(r"dim_labels=\w+_(\w+)->")
# A cuBLAS matmul or a cuDNN convolution that XLA's GPU compiler rewrote a dot or a convolution
# into, and a matmul's contracting dimensions (a convolution keeps its window and dim_labels).
_GEMM_TARGET_RE = re.compile(r'custom_call_target="__cublas\$(?:lt\$)?(?:gemm|matmul)[^"]*"')
_CONV_TARGET_RE = re.compile(r'custom_call_target="__cudnn\$conv[^"]*"')
_GEMM_CONTRACTING_RE = re.compile(r'"lhs_contracting_dimensions":\[([^\]]*)\]')


def program_flops(hlo_text: str) -> float | None:
    """FLOPs of the module's entry computation on one device; None where a loop whose trip count
    XLA could not record runs a matmul (its FLOPs cannot be bounded)."""
    module = parse_module(hlo_text)
    if module.entry is None:
        return 0.0
    return _Counter(module).computation(module.entry)


class _Counter:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.memo: dict[str, float | None] = {}

    def computation(self, name: str) -> float | None:
        if name not in self.memo:
            self.memo[name] = 0.0  # a computation that (wrongly) calls itself counts once
            self.memo[name] = self._count(self.module.computations.get(name, []))
        return self.memo[name]

    def _count(self, instructions: list[Instr]) -> float | None:
        types = {ins.name: ins.result_type for ins in instructions}
        total = 0.0
        for ins in instructions:
            inner = self._inner(ins)
            if inner is None:
                return None
            total += instruction_flops(ins, types) + inner
        return total

    def _inner(self, ins: Instr) -> float | None:
        """What the computations ``ins`` runs cost: a conditional's costliest branch, else each
        callee times how often it runs."""
        if ins.op == "conditional":
            costs = [self.computation(branch) for branch in branches(ins)]
            return None if None in costs else max((c for c in costs if c is not None), default=0.0)
        total = 0.0
        for callee, times in callees(ins):
            cost = self.computation(callee)
            if cost is None or (times is None and cost):
                return None
            total += cost * (times or 0)
        return total


def is_matmul(ins: Instr) -> bool:
    """Whether ``ins`` is a matmul or a convolution, as XLA left it or as a library call."""
    if ins.op == "custom-call":
        return bool(_GEMM_TARGET_RE.search(ins.attrs) or _CONV_TARGET_RE.search(ins.attrs))
    return ins.op in ("dot", "convolution")


def instruction_flops(ins: Instr, types: dict[str, str]) -> float:
    """The instruction's own FLOPs: a dot's, a convolution's, a cuBLAS matmul's or a cuDNN
    convolution's; 0 otherwise."""
    if ins.op == "dot":
        return _dot(ins, types, _dims(_CONTRACTING_RE, ins.attrs))
    if ins.op == "convolution":
        return _convolution(ins, types)
    if ins.op == "custom-call" and _GEMM_TARGET_RE.search(ins.attrs):
        return _dot(ins, types, _dims(_GEMM_CONTRACTING_RE, ins.attrs))
    if ins.op == "custom-call" and _CONV_TARGET_RE.search(ins.attrs):
        return _convolution(ins, types)
    return 0.0


def _dot(ins: Instr, types: dict[str, str], contracting: list[int]) -> float:
    """2 x the result's elements x the size of the contracted dimensions (of the left operand)."""
    result, lhs = _first_array(ins.result_type), _operand_dims(ins, types, 0)
    return 2.0 * prod(result) * prod(lhs[d] for d in contracting)


def _convolution(ins: Instr, types: dict[str, str]) -> float:
    """2 x the result's elements x the kernel's elements that meet each of them (its spatial
    window times its input features: all of the kernel but its output features)."""
    kernel = _operand_dims(ins, types, 1)
    labels = _DIM_LABELS_RE.search(ins.attrs)
    out_features = kernel[labels.group(1).index("o")] if labels and "o" in labels.group(1) else 1
    return 2.0 * prod(_first_array(ins.result_type)) * prod(kernel) / max(out_features, 1)


def _dims(pattern: re.Pattern[str], attrs: str) -> list[int]:
    match = pattern.search(attrs)
    return [int(d.strip().strip('"')) for d in match.group(1).split(",") if d.strip()] if match else []


def _first_array(type_text: str) -> tuple[int, ...]:
    """The dimensions of a type's array, or of a tuple's first (a cuBLAS call returns its
    workspace beside its result)."""
    found = arrays(type_text)
    return found[0][0] if found else ()


def _operand_dims(ins: Instr, types: dict[str, str], index: int) -> tuple[int, ...]:
    """The dimensions of operand ``index``: printed with it (``f32[8,16]{1,0} %a``), or those of
    the instruction that defines it in the same computation."""
    pieces = operands(ins)
    if index >= len(pieces):
        return ()
    piece = pieces[index]
    printed = arrays(piece.split("%")[0])
    if printed:
        return printed[0][0]
    name = piece.strip().lstrip("%")
    return _first_array(types.get(name, ""))


_STABLEHLO_DOT_RE = re.compile(
    r"stablehlo\.dot_general\b[^:\n]*?contracting_dims\s*=\s*\[([\d,\s]*)\][^:\n]*:\s*\(tensor<([^>]*)>"
)
_STABLEHLO_PRECISION_RE = re.compile(r"precision\s*=\s*\[(\w+)")
_STABLEHLO_RESULT_RE = re.compile(r"->\s*tensor<([^>]*)>")


def dot_shares(module_text: str) -> dict[str, float]:
    """Each kind of matmul's share of a program's matmul FLOPs, read from the lowered program
    (StableHLO), where each dot keeps the dtype the program gave it (XLA:CPU computes bfloat16
    in float32): ``"bf16"``, ``"f32"`` at default precision, ``"f32:highest"``. A chip's peak
    differs by kind (``machines.Machine.peak_flops``). Each dot counts once, a loop's too."""
    flops: dict[str, float] = {}
    for line in module_text.splitlines():
        dot = _STABLEHLO_DOT_RE.search(line)
        result = _STABLEHLO_RESULT_RE.search(line)
        if not dot or not result:
            continue
        contracting, lhs_type = dot.groups()
        stated = _STABLEHLO_PRECISION_RE.search(line)
        precision = stated.group(1) if stated else None
        *lhs_dims, dtype = lhs_type.split("x")
        lhs = [int(d) if d.isdigit() else 1 for d in lhs_dims]
        out = [int(d) for d in result.group(1).split("x")[:-1] if d.isdigit()]
        size = 2.0 * prod(out) * prod(lhs[int(d)] for d in contracting.split(",") if d.strip())
        key = dtype.lower() if precision in (None, "DEFAULT") else f"{dtype.lower()}:{precision.lower()}"
        flops[key] = flops.get(key, 0.0) + size
    total = sum(flops.values())
    return {key: value / total for key, value in sorted(flops.items())} if total else {}
