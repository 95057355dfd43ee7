"""What each part's bfloat16 tolerance is derived from: the reference's own error against a
float32 evaluation of the same inputs, on every bfloat16 case of the part (visible and hidden),
on the seeds it is judged on and more.

    .venv/bin/python benchmarks/bf16_tolerances.py [--seeds 16]

Prints, per part, the atol beside the spec's rtol that ``MULTIPLE`` times that error needs, or for
a part whose atol is a share of each case's largest value, that share (the figure the spec's
comment gives, rounded up to one significant figure), how much of the spec's
tolerance the error uses, and how much a sum of the partials taken one at a time in bfloat16, in
either device order, moves the reference's result (``tests/helpers/bfloat16.py``).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.mesh import use_cpu_devices  # noqa: E402

use_cpu_devices(8)  # as the trusted worker has it, before anything starts JAX

from tests.helpers import bfloat16  # noqa: E402


def one_figure_up(x: float) -> float:
    """``x`` rounded up to one significant figure: 7.18 -> 8, 0.121 -> 0.2."""
    if x <= 0:
        return 0.0
    step = 10 ** math.floor(math.log10(x))
    return math.ceil(x / step - 1e-9) * step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=16, help="seeds 0 to N - 1 beside the two each case is judged on")
    seeds = parser.parse_args().seeds
    print(f"multiple {bfloat16.MULTIPLE}; seeds: the two each case is judged on, and 0 to {seeds - 1}")
    for assignment, task, cases in bfloat16.bf16_parts():
        tolerance = task.tolerance_for("bfloat16")
        rtol, scaled = tolerance.rtol, bool(tolerance.of_largest)
        needed = bfloat16.needed_share if scaled else bfloat16.needed_atol
        ref = bfloat16.reference(assignment, task.name)
        need = used = moved = 0.0
        for case in cases:
            for seed in sorted(set(bfloat16.seeds(assignment, task, case, others=True)) | set(range(seeds))):
                want = bfloat16.values(bfloat16.run(ref, task, case, seed))
                exact = bfloat16.values(bfloat16.run(ref, task, case, seed, "float32"))
                need = max(need, needed(exact, want, rtol, bfloat16.MULTIPLE))
                used = max(used, bfloat16.tolerance_used(exact, want, tolerance))
                for order in bfloat16.ORDERS:
                    again = bfloat16.values(bfloat16.run(ref, task, case, seed, order=order))
                    moved = max(moved, bfloat16.tolerance_used(again, want, tolerance))
        print(
            f"{assignment}/{task.name}: {tolerance}; {bfloat16.MULTIPLE}x the reference's error against "
            f"float32 needs {'of_largest' if scaled else 'atol'} {need:.3g} ({one_figure_up(need):g}); the error "
            f"uses {used:.3g} of the tolerance, a reordered sum {moved:.3g}",
            flush=True,
        )


if __name__ == "__main__":
    main()
