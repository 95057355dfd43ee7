"""One chip's table (``tests/helpers/chip_table.py``): time its programs on a GPU, or hold the
roofline to a table of times measured before.

On a GPU, ``--measure FILE`` compiles each program there, times it (median of 30 calls after 3
warm-up calls, each call waited for, as a student's cell waits; and the median of 5 runs of 10
calls in a row, waited for once, which leaves most of the host's wait out) and writes each
program's times and the GPU compiler's own figures as JSON (``--hlo DIR``: its compiled HLO too).
On any machine, ``--against FILE`` projects each program as the grader would (compiled for the
CPU, read by ``cost_of``, projected on one chip of the machine FILE names) and prints the
model's error beside each measured time, the calibration the table implies, and the pairs the
model orders otherwise than the chip:

    python3 benchmarks/chip_table.py --measure benchmarks/results/chip_table_h200_2026-11-28.json   # on a GPU
    .venv/bin/python benchmarks/chip_table.py --against benchmarks/results/chip_table_h200_2026-11-28.json

``benchmarks/gpu_check.py`` runs both as its part 5.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax
import jax.numpy as jnp

from autograder.core.calibration import fit
from tests.helpers.chip_table import LARGE_S, TINY, Program, errors, programs, rows, swapped, timed


def _seconds(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(call())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_one(program: Program, device: Any, hlo: Path | None = None) -> dict[str, Any]:
    """One program on ``device``: its times and what the device's compiler says it costs (its
    compiled HLO written under ``hlo`` where given)."""
    args = [jax.device_put(jnp.full(s.shape, 0.01, s.dtype), device) for s in program.structs()]
    compiled = jax.jit(program.fn).lower(*args).compile()
    if hlo:
        (hlo / (re.sub(r"[^\w.-]+", "_", program.name) + ".hlo")).write_text(compiled.as_text())
    for _ in range(3):  # warm: the first calls allocate and load
        jax.block_until_ready(compiled(*args))
    each = _seconds(lambda: compiled(*args), 30)
    in_a_row = _seconds(lambda: [compiled(*args) for _ in range(10)][-1], 5) / 10
    analysis = compiled.cost_analysis()
    analysis = (analysis[0] if isinstance(analysis, list) else analysis) or {}
    memory = compiled.memory_analysis()
    return {
        "measured_s": each,
        "in_a_row_s": in_a_row,
        "xla_flops": analysis.get("flops"),
        "xla_bytes_accessed": analysis.get("bytes accessed"),
        "buffers": memory
        and {
            "arguments": memory.argument_size_in_bytes,
            "outputs": memory.output_size_in_bytes,
            "temporaries": memory.temp_size_in_bytes,
        },
    }


def measure(device: Any, hlo: Path | None = None) -> dict[str, Any]:
    """Every program on ``device``, one line printed per program as it goes."""
    table: dict[str, Any] = {}
    for program in programs():
        try:
            table[program.name] = row = measure_one(program, device, hlo)
        except Exception as err:  # a dtype this chip or JAX lacks: said, not fatal
            table[program.name] = {"error": str(err).splitlines()[0][:200]}
            print(f"  {program.name:<48} failed: {table[program.name]['error']}")
            continue
        print(
            f"  {program.name:<48} {row['measured_s'] * 1e3:9.3f} ms per call waited for, "
            f"{row['in_a_row_s'] * 1e3:9.3f} ms in a row"
        )
    return {"device": device.device_kind, "jax": jax.__version__, "programs": table}


def against(table: dict[str, Any]) -> None:
    """Print the model's error on every program of ``table``."""
    machine, found = rows(table)
    print(f"{table['device']} with JAX {table['jax']}, projected on {machine.name}")
    print(f"  calibration the table implies: {fit(timed(machine, found), TINY)}")
    header = ("program", "GFLOP", "model MB", "GPU MB", "projected ms (compute, memory, call)", "measured ms", "ratio")
    print(f"  {header[0]:<50} {header[1]:>8} {header[2]:>9} {header[3]:>8} {header[4]:>38} {header[5]:>11} {header[6]}")
    for r in found:
        p, buffers = r.projected, r.measured.get("buffers") or {}
        gpu = buffers["arguments"] + buffers["outputs"] + 2 * buffers["temporaries"] if buffers else 0
        shown = f"{p.total_s * 1e3:.3f} ({p.compute_s * 1e3:.3f}, {p.memory_s * 1e3:.3f}, {p.per_call_s * 1e3:.3f})"
        print(
            f"  {r.program:<50} {r.cost.flops / 1e9:8.1f} {r.cost.hbm_bytes / 1e6:9.1f} {gpu / 1e6:8.1f} "
            f"{shown:>38} {r.measured['measured_s'] * 1e3:11.3f} {r.ratio:.2f}x"
        )
    off = errors(found)
    print(
        f"  programs of {LARGE_S * 1e3:g} ms or more: {len(off)}; off by {min(off):.2f}x to {max(off):.2f}x, "
        f"median {statistics.median(off):.2f}x (goal: within 1.5x)"
    )
    pairs = swapped(found)
    print(f"  pairs timed more than 1.2x apart that the model orders otherwise: {len(pairs)}")
    for a, b in pairs:
        print(
            f"    {a.program} ({a.measured['measured_s'] * 1e3:.3f} ms), {b.program} ({b.measured['measured_s'] * 1e3:.3f} ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", type=Path, help="time the programs on this machine's first device; write JSON")
    parser.add_argument("--hlo", type=Path, help="with --measure: write each program's compiled HLO here")
    parser.add_argument("--against", type=Path, help="project the programs and hold them to this JSON's times")
    args = parser.parse_args()
    if args.measure:
        if args.hlo:
            args.hlo.mkdir(parents=True, exist_ok=True)
        result = measure(jax.devices()[0], args.hlo)
        args.measure.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.measure}")
    elif args.against:
        against(json.loads(args.against.read_text()))
    else:
        parser.error("give --measure FILE (on a GPU) or --against FILE")


if __name__ == "__main__":
    main()
