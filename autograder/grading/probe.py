"""``probe(fn)``: what a notebook's function compiles to, as the grader sees it, without a verdict.

Assignments ask students to predict collectives and bytes before they look; a ``measure`` cell in
the notebook calls ``probe`` and prints the prediction beside what the compiled program does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.records import ShardMapSig
from ..core.tasks import Case
from ..harness import shard_map as harness
from ..harness.calls import signature
from ..trusted.inputs import make_inputs
from ..trusted.measure import execute
from .self_check import CheckFailed, find_task


@dataclass(frozen=True)
class Probe:
    """One compiled call of a task's function: its mesh and inputs, the collectives its HLO
    runs, the bytes one device sends (at the program's own dtypes), the FLOPs of its matmuls and
    the memory it needs at its peak, per device: what the grader measures of it."""

    function: str
    mesh: str
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    collectives: dict[str, int]
    bytes_per_device: float | None
    flops: float | None
    peak_bytes: int | None

    def __repr__(self) -> str:
        inputs = ", ".join(f"{'x'.join(map(str, s))} {d}" for s, d in zip(self.shapes, self.dtypes))
        runs = ", ".join(f"{n} {name}" for name, n in sorted(self.collectives.items())) or "no collectives"
        return (
            f"{self.function}({inputs}) on mesh {self.mesh}: runs {runs}; sends {self.bytes_per_device} bytes, "
            f"multiplies {self.flops} FLOPs and needs {self.peak_bytes} bytes at its peak, per device"
        )


def probe(fn: Callable[..., Any], *, task: str | None = None, case: Case | None = None) -> Probe:
    """Compile ``fn`` as the grader does on its task's first case (or ``case``) and read its HLO.
    A function that does not compile or run raises ``CheckFailed`` with its own error."""
    assignment, found = find_task(task or str(getattr(fn, "__name__", "")))
    if found.kind != "shard_map":
        raise CheckFailed(f"{found.name} is not a shard_map function: there is no program to probe")
    sig = signature(found, case or found.cases[0], assignment.name)
    assert sig["kind"] == "shard_map"
    try:
        wrapped, _, mesh = harness.build(fn, sig)
        _, structure = execute(wrapped, make_inputs(sig, 0, mesh), mesh)
    except Exception as err:  # an unfinished or broken function: its own error, in one line
        raise CheckFailed(f"{found.name} does not run yet: {type(err).__name__}: {str(err)[:200]}") from None
    census, spent = structure["census"], structure["signature"]
    return Probe(
        found.name,
        sig["mesh"],
        *_inputs(sig),
        dict(census.get("counts", {})),
        census.get("program_bytes"),
        spent["flops"],
        spent["peak"],
    )


def _inputs(sig: ShardMapSig) -> tuple[tuple[tuple[int, ...], ...], tuple[str, ...]]:
    return tuple(tuple(i["shape"]) for i in sig["inputs"]), tuple(i["dtype"] for i in sig["inputs"])
