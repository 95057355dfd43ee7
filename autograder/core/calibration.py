"""What fraction of its peaks a real chip reached, and what one call costs however small: fitted
on a table of single-chip programs timed on one H200 (``benchmarks/chip_table.py``, its figures
in ``benchmarks/results/chip_table_h200_2026-11-28.json``) and applied to the Hopper GPUs the
course projects on. A chip nobody measured is projected at its peaks, and says so.

The fit (``fit``), each figure a median so that one odd program moves none of them:
- per call: the time of a call that does nothing (``x + 1`` on eight floats), waited for;
- matmul, per kind of matmul (``flops.dot_shares``: bf16, TF32, f32 at highest precision, fp8):
  over the programs of ``LARGE_S`` or more whose matmuls are all of that kind and whose compute
  at peak exceeds their memory time, the compute at peak over the measured time less the
  per-call cost (a small matmul's time is mostly the wait for it); a kind never measured takes
  bf16's;
- memory: the same over the programs whose memory time at peak exceeds their compute at peak and
  the per-call cost (their time is mostly memory: elementwise work, sums, softmax, layernorm and
  attention, its scores through HBM), their memory time at peak; none of the table's programs
  with no matmul runs ``LARGE_S``, and left to those alone the fit would miss what the attention's
  streams reach (0.65-0.70 of the peak rate against 0.43-0.78 for the rest).
``tests/core/test_calibration.py`` refits from the table and holds these figures to it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .machines import Machine


@dataclass(frozen=True)
class Calibration:
    matmul: dict[str, float]  # per kind of matmul, the fraction of its peak reached
    memory: float  # the fraction of HBM's peak rate reached
    per_call_s: float  # one call's fixed cost: launch, and the host waiting for the result
    source: str


@dataclass(frozen=True)
class Timed:
    """One program of the table: what the model reads at peak, and what the chip took."""

    name: str
    kind: str  # its matmuls' kind where they are all of one, else ""
    compute_s: float  # its FLOPs at the chip's peaks
    memory_s: float  # its HBM bytes at the chip's peak
    measured_s: float


MEASURED_ON = "2026-11-28"
H200_TABLE = f"one H200 SXM, JAX 0.11.2, 24 single-chip programs, {MEASURED_ON} (benchmarks/chip_table.py)"
LARGE_S = 0.5e-3  # a large program: its time is mostly its work, and the stated error covers it
HOPPER = Calibration(
    matmul={"bf16": 0.752, "f32": 0.808, "f32:highest": 0.747, "f8e4m3fn": 0.473},
    memory=0.65,
    per_call_s=6.8e-05,
    source=H200_TABLE,
)
# The calibrated model's error on the same table's programs of LARGE_S or more: the most of
# measured / projected or its inverse (``benchmarks/chip_table.py --against`` prints it).
HOPPER_ERROR = 1.40
_BY_CHIP = {"H200 SXM": HOPPER, "H100 SXM": HOPPER}  # the same Hopper SM; the H100 unmeasured (assumed)


def calibration_for(machine: Machine) -> Calibration | None:
    return _BY_CHIP.get(machine.chip)


def matmul_fraction(calibration: Calibration | None, kind: str) -> float:
    """The fraction of its peak a kind of matmul reached: bf16's where that kind was never
    timed, 1 on a chip never measured."""
    if calibration is None:
        return 1.0
    return calibration.matmul.get(kind, calibration.matmul["bf16"])


def fit(table: list[Timed], tiny: str) -> Calibration:
    """The calibration a table implies (rounded as the constants are written), ``tiny`` naming
    the program that does nothing."""
    per_call = next(t.measured_s for t in table if t.name == tiny)
    compute_bound = [t for t in table if t.kind and t.compute_s > t.memory_s and t.measured_s >= LARGE_S]
    memory_bound = [t for t in table if t.memory_s > max(t.compute_s, per_call) and t.measured_s > per_call]
    return Calibration(
        {
            kind: round(
                statistics.median(t.compute_s / (t.measured_s - per_call) for t in compute_bound if t.kind == kind), 3
            )
            for kind in sorted({t.kind for t in compute_bound})
        },
        round(statistics.median(t.memory_s / (t.measured_s - per_call) for t in memory_bound), 2),
        float(f"{per_call:.2g}"),
        H200_TABLE,
    )
