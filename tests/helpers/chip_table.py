"""One chip's table: single-device programs timed on a real GPU (``benchmarks/chip_table.py``),
and the roofline held to their times: each program compiled for the CPU as the grader compiles a
submission, read by ``cost_of`` and projected on one chip of the machine that measured them.
The calibration (``core/calibration.py``) is fitted on it and its error stated from it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from autograder.core.calibration import LARGE_S, Timed
from autograder.core.machines import MACHINES, Machine
from autograder.core.roofline import Cost, Projection, at_peak, cost_of, project

MEASURED = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "chip_table_h200_2026-11-28.json"
TINY = "one tiny call x+1 (8 f32)"  # the program that does nothing: one call's fixed cost


BF16, F32 = jnp.bfloat16, jnp.float32


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable[..., Any]
    shapes: tuple[tuple[tuple[int, ...], Any], ...]  # each argument's shape and dtype

    def structs(self) -> list[jax.ShapeDtypeStruct]:
        return [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in self.shapes]


def _matmul(m: int, k: int, n: int, dtype=BF16, precision=None) -> Program:
    label = {None: "", jax.lax.Precision.HIGHEST: " precision=HIGHEST"}[precision]
    return Program(
        f"matmul {m}x{k}@{k}x{n} {jnp.dtype(dtype).name}{label}",
        lambda a, b: jnp.matmul(a, b, precision=precision),
        (((m, k), dtype), ((k, n), dtype)),
    )


def _layernorm(x):
    x32 = x.astype(F32)
    mean = x32.mean(-1, keepdims=True)
    var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
    return ((x32 - mean) * jax.lax.rsqrt(var + 1e-6)).astype(x.dtype)


def _attention(q, k, v):  # (heads, tokens, 128) each
    s = jnp.einsum("hqd,hkd->hqk", q, k) / 128**0.5
    return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s.astype(F32), axis=-1).astype(q.dtype), v)


def _block(x, wq, wk, wv, wo, w1, w2):
    """One pre-activation transformer layer's forward: attention of 32 heads of 128, then a gelu MLP."""
    t, d = x.shape
    h = _layernorm(x)
    q, k, v = ((h @ w).reshape(t, 32, 128).transpose(1, 0, 2) for w in (wq, wk, wv))
    x = x + _attention(q, k, v).transpose(1, 0, 2).reshape(t, d) @ wo
    return x + jax.nn.gelu(_layernorm(x) @ w1) @ w2


def programs() -> list[Program]:
    """The H200 table's 21 programs (``../shared/measurements/h200-2026-11-28.md``), then what
    tells the peaks per dtype apart and one call's fixed cost."""
    t, d = 8192, 4096
    return [
        *(_matmul(n, n, n) for n in (8192, 4096, 2048, 1024, 512)),
        _matmul(8192, 8192, 8192, F32),
        _matmul(16384, 4096, 128),
        _matmul(4096, 4096, 16384),
        _matmul(32, 8192, 8192),
        Program(
            "MLP 4096x4096->16384->4096 bf16",
            lambda x, a, b: jax.nn.relu(x @ a) @ b,
            (((4096, 4096), BF16), ((4096, 16384), BF16), ((16384, 4096), BF16)),
        ),
        Program(
            "MLP gelu 8192x4096->16384->4096 bf16",
            lambda x, a, b: jax.nn.gelu(x @ a) @ b,
            (((8192, 4096), BF16), ((4096, 16384), BF16), ((16384, 4096), BF16)),
        ),
        Program("elementwise x*2+1 (256 MiB bf16)", lambda x: x * 2 + 1, (((8192, 16384), BF16),)),
        Program("elementwise x*2+1 (16 MiB bf16)", lambda x: x * 2 + 1, (((2048, 4096), BF16),)),
        Program("add two arrays (128 MiB f32 each)", lambda x, y: x + y, (((8192, 4096), F32), ((8192, 4096), F32))),
        Program("row sum (256 MiB f32)", lambda x: x.sum(axis=1), (((8192, 8192), F32),)),
        Program("softmax rows 8192x8192 f32", lambda x: jax.nn.softmax(x, axis=-1), (((8192, 8192), F32),)),
        Program("layernorm 16384x4096 bf16", _layernorm, (((16384, 4096), BF16),)),
        Program("attention 1 head 4096 tok d128 bf16", _attention, (((1, 4096, 128), BF16),) * 3),
        Program("attention 32 heads 4096 tok d128 bf16", _attention, (((32, 4096, 128), BF16),) * 3),
        Program(
            "dot_product_attention 32 heads 4096 tok bf16",
            jax.nn.dot_product_attention,
            (((1, 4096, 32, 128), BF16),) * 3,
        ),
        Program(
            "transformer block fwd 8192 tok 4096 bf16",
            _block,
            (((t, d), BF16),) + (((d, d), BF16),) * 4 + (((d, 4 * d), BF16), ((4 * d, d), BF16)),
        ),
        _matmul(8192, 8192, 8192, F32, jax.lax.Precision.HIGHEST),
        Program(
            "matmul 8192x8192@8192x8192 float8_e4m3fn",
            lambda a, b: jnp.matmul(a, b, preferred_element_type=BF16),
            (((8192, 8192), jnp.float8_e4m3fn), ((8192, 8192), jnp.float8_e4m3fn)),
        ),
        Program("one tiny call x+1 (8 f32)", lambda x: x + 1, (((8,), F32),)),
    ]


def measured_table(path: Path = MEASURED) -> dict[str, Any]:
    return json.loads(path.read_text())


def one_chip(device_kind: str) -> Machine:
    """One chip of the machine whose chip measured the table ("NVIDIA H200" is an H200 SXM)."""
    for machine in MACHINES.values():
        if machine.hosts == 1 and machine.chip.split()[0] in device_kind:
            return dataclasses.replace(machine, name=f"one {machine.chip}", chips=1)
    raise ValueError(f"no machine in core/machines.py has the chip {device_kind!r}")


def model_cost(program: Program) -> Cost:
    """The program's cost as the grader reads one: compiled for the CPU, on a mesh of one."""
    cpu = jax.devices("cpu")[0]  # the CPU's compiler, as the grader's, on a machine with a GPU too
    mesh = jax.sharding.Mesh(np.array([cpu]), ("d",))
    on_cpu = jax.sharding.SingleDeviceSharding(cpu)
    structs = [jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=on_cpu) for s in program.structs()]
    lowered = jax.jit(program.fn).lower(*structs)
    return cost_of(lowered, lowered.compile(), mesh)


@dataclass(frozen=True)
class Row:
    program: str
    cost: Cost
    projected: Projection
    measured: dict[str, Any]  # the table's figures for it

    @property
    def ratio(self) -> float:
        """Measured over projected."""
        return self.measured["measured_s"] / self.projected.total_s


def rows(table: dict[str, Any]) -> tuple[Machine, list[Row]]:
    """Every program the table timed, projected on one chip of its machine."""
    machine = one_chip(table["device"])
    found = []
    for program in programs():
        measured = table["programs"].get(program.name, {})
        if "measured_s" in measured:
            cost = model_cost(program)
            found.append(Row(program.name, cost, project(cost, {"d": 1}, machine), measured))
    return machine, found


def timed(machine: Machine, found: list[Row]) -> list[Timed]:
    """What a calibration is fitted on: each program at the chip's peaks, and its time."""
    return [
        Timed(
            r.program,
            next(iter(r.cost.dots)) if len(r.cost.dots) == 1 else "",
            *at_peak(r.cost, machine),
            r.measured["measured_s"],
        )
        for r in found
    ]


def large(found: list[Row]) -> list[Row]:
    return [r for r in found if r.measured["measured_s"] >= LARGE_S]


def errors(found: list[Row]) -> list[float]:
    """How far off the model is on each program of ``LARGE_S`` or more: measured / projected,
    or its inverse."""
    return [max(r.ratio, 1 / r.ratio) for r in large(found)]


def swapped(found: list[Row], apart: float = 1.2) -> list[tuple[Row, Row]]:
    """Pairs the chip timed more than ``apart`` times apart that the model orders the other way."""
    out = []
    for i, a in enumerate(found):
        for b in found[i + 1 :]:
            ma, mb = a.measured["measured_s"], b.measured["measured_s"]
            if (a.projected.total_s - b.projected.total_s) * (ma - mb) < 0 and max(ma, mb) / min(ma, mb) > apart:
                out.append((a, b))
    return out
