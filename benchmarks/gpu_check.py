"""The project's GPU check, for a session lent a GPU machine: does the course run there, and does
the grader's reading of compiled programs hold on the GPU compiler's output and on that machine's
JAX? In four parts, each printed as it goes:

1. FLOPs: for matmul-shaped programs, the closed form, what ``core/flops.py`` counts in the GPU's
   compiled HLO (where XLA rewrites dots into cuBLAS calls and Triton fusions), XLA's own cost
   analysis (which counts a loop's body once) and the peak memory; then the same on the CPU.
2. A ring's census on this JAX's 8 CPU devices, beside its closed forms.
3. Every shard_map reference's census (collectives, bytes and peak per device, each visible case)
   on this JAX's CPU, beside the pinned JAX's (``pinned_census.json``, written by ``--record``
   with the course's JAX), and on the accelerator where it has as many devices as the case's mesh.
4. Every lecture and every assignment's source notebook (with its reference solutions), each run
   in a fresh Python as a kernel runs it, code cells in order, half as many at once as the machine
   has cores: the setup cell chooses the devices (its line is printed) and every ``check()`` and
   every assertion holds on that machine's JAX, or the line names the cell and line that stopped
   (``--notebooks`` runs this part alone).
5. The model against the machine (issue 52): the programs of one chip's table
   (``chip_table.py``) timed on the GPU, each beside the roofline's projection for one chip of
   the matching machine (``core/machines.py``): the model's error, the calibration these times
   imply and the pairs the model orders otherwise. Printed, never a failure; ``--table FILE``
   also writes the times as JSON, as ``benchmarks/results/chip_table_*.json`` keep them.

Runs from this checkout, never installed, with the machine's own JAX; beside JAX and NumPy it
needs only what the notebooks import (Flax, Optax, Matplotlib, flatbuffers):

    python3 benchmarks/gpu_check.py            # exits 1 if anything differs or fails
    python3 benchmarks/gpu_check.py --notebooks    # part 4 alone
    python3 benchmarks/gpu_check.py --table benchmarks/results/chip_table_<chip>_<date>.json
    .venv/bin/python benchmarks/gpu_check.py --record   # the pinned JAX's censuses, part 3

86 s on an H100 with the part 5 of issue 43, 147 s on an H200 with this one (2026-11-28;
``benchmarks/results/`` keeps what each printed).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax

jax.config.update("jax_num_cpu_devices", 8)  # before any backend starts: the course's CPU mesh too

import chip_table  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from autograder.core.flops import program_flops  # noqa: E402
from autograder.core.hlo import hlo_census  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PINNED = REPO / "benchmarks" / "pinned_census.json"
NOTEBOOKS = tuple(
    str(path.relative_to(REPO))
    for path in sorted(REPO.glob("course/[0-9][0-9]_*.ipynb")) + sorted(REPO.glob("assignments/source/*/*.ipynb"))
)


def programs(dtype):
    """(name, function, arguments, closed form of its FLOPs) for matmul-shaped work."""
    a, b = jnp.ones((256, 512), dtype), jnp.ones((512, 128), dtype)
    q = k = v = jnp.ones((1024, 64), dtype)
    x, w = jnp.ones((8, 32, 32, 16), dtype), jnp.ones((3, 3, 16, 32), dtype)
    loop = lambda a: jax.lax.fori_loop(0, 6, lambda i, x: jnp.tanh(x @ a), a[:, :256] @ a[:256, :])  # noqa: E731
    conv = lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))  # noqa: E731
    attention = lambda q, k, v: jax.nn.softmax(q @ k.T, axis=-1) @ v  # noqa: E731
    return [
        ("matmul", lambda a, b: a @ b, (a, b), 2 * 256 * 512 * 128),
        ("two matmuls", lambda a, b: jnp.tanh(a @ b) @ b.T, (a, b), 2 * (2 * 256 * 512 * 128)),
        (
            "batched",
            lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
            (a.reshape(4, 64, 512), jnp.ones((4, 512, 128), dtype)),
            4 * 2 * 64 * 512 * 128,
        ),
        ("loop of 6", loop, (jnp.ones((256, 256), dtype),), 2 * 256**3 * 7),
        ("attention", attention, (q, k, v), 2 * (2 * 1024 * 1024 * 64)),
        ("convolution", conv, (x, w), 2 * (8 * 32 * 32 * 32) * (3 * 3 * 16)),
    ]


def read(device, dtype) -> list[str]:
    """One line per program compiled for ``device``: closed form, counted, XLA's, peak bytes."""
    failures = []
    for name, fn, args, closed in programs(dtype):
        placed = [jax.device_put(arg, device) for arg in args]
        start = time.perf_counter()
        compiled = jax.jit(fn).lower(*placed).compile()
        took = time.perf_counter() - start
        counted = program_flops(compiled.as_text())
        costs = compiled.cost_analysis()
        xla = (costs[0] if isinstance(costs, list) else costs or {}).get("flops")
        memory = compiled.memory_analysis()
        peak = memory and memory.argument_size_in_bytes + memory.output_size_in_bytes + memory.temp_size_in_bytes
        verdict = "ok" if counted == closed else "DIFFERS"
        print(
            f"  {name:12s} {jnp.dtype(dtype).name:9s} closed form {closed:>13,.0f}"
            f"  counted {counted or 0:>13,.0f}  XLA's {xla or 0:>13,.0f}  peak {peak or 0:>11,} B"
            f"  compile {took:.2f} s  {verdict}"
        )
        if counted != closed:
            failures.append(f"{device.platform} {name} {dtype}: counted {counted}, closed form {closed}")
    return failures


def ring_census() -> list[str]:
    """A collective matmul on this JAX's 8 CPU devices: its ppermutes, bytes and FLOPs."""
    mesh = jax.make_mesh((8,), ("i",), devices=jax.devices("cpu"), axis_types=(jax.sharding.AxisType.Explicit,))

    def ring(a, b):
        out = a @ b
        for _ in range(7):
            a = jax.lax.ppermute(a, "i", [(j, (j + 1) % 8) for j in range(8)])
            out = out + a @ b
        return out

    fn = jax.jit(jax.shard_map(ring, mesh=mesh, in_specs=(jax.P("i"), jax.P(None, "i")), out_specs=jax.P(None, "i")))
    a = jax.device_put(jnp.ones((64, 32)), jax.NamedSharding(mesh, jax.P("i")))
    b = jax.device_put(jnp.ones((32, 16)), jax.NamedSharding(mesh, jax.P(None, "i")))
    with jax.set_mesh(mesh):
        hlo = fn.lower(a, b).compile().as_text()
    census, flops = hlo_census(hlo, (8,), ("i",)), program_flops(hlo)
    want = {"collective-permute": 7}, 7 * 8 * 32 * 4, 8 * 2 * 8 * 32 * 2
    got = dict(census.counts), census.bytes_per_device, flops
    print(
        f"  ring on 8 CPU devices: collectives {got[0]}, bytes per device {got[1]:g}, FLOPs {got[2]:g}; "
        f"closed forms {want[0]}, {want[1]:g}, {want[2]:g}: {'ok' if got == want else 'DIFFERS'}"
    )
    return [] if got == want else [f"ring census {got} against {want}"]


def censuses() -> dict[str, dict]:
    """Each shard_map reference's census on each visible case whose mesh this process's default
    devices can hold: collectives, bytes and peak memory per device (a child's part 3)."""
    from autograder.harness import shard_map
    from autograder.harness.calls import signature
    from autograder.specs import ASSIGNMENTS
    from autograder.trusted import measure
    from autograder.trusted.inputs import make_inputs

    found = {}
    for assignment in ASSIGNMENTS.values():
        solutions = importlib.import_module(f"solutions.{assignment.solutions}")
        for task in (t for t in assignment.tasks if t.kind == "shard_map"):
            for case in (c for c in task.cases if c.mesh_spec.size <= len(jax.devices())):
                sig = signature(task, case, assignment.name)
                wrapped, _, mesh = shard_map.build(getattr(solutions, task.name), sig)
                _, structure = measure.execute(wrapped, make_inputs(sig, 0, mesh), mesh)
                census = structure["census"]
                found[f"{assignment.name}/{task.name} {case.label()}"] = {
                    "collectives": census["counts"],
                    "bytes": census["bytes_per_device"],
                    "peak": structure["signature"]["peak"],
                }
    return found


def _child(*args: str, cpu_only: bool = False, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if cpu_only:
        env["JAX_PLATFORMS"] = "cpu"
    return subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _children_censuses(cpu_only: bool) -> dict[str, dict]:
    done = _child("--censuses", cpu_only=cpu_only)
    if done.returncode:
        raise RuntimeError(f"the censuses failed: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare_censuses(accelerator: str | None) -> list[str]:
    """Part 3: this JAX's censuses on its CPU beside the pinned JAX's, and the accelerator's. What
    the grader reads (collectives, bytes) must agree; a peak is the compiler's buffer assignment,
    which a release may change (a grade holds it to the reference's on the same JAX), so a changed
    peak is printed with its ratio and fails nothing."""
    pinned = json.loads(PINNED.read_text()) if PINNED.exists() else {}
    cpu = _children_censuses(cpu_only=True)
    theirs = _children_censuses(cpu_only=False) if accelerator else {}
    failures = []
    on = f", {len(theirs)} of them on the {accelerator} (the others need more devices)" if accelerator else ""
    print(f"  {len(cpu)} cases on this JAX's CPU{on}; the pinned JAX's: {pinned.get('_jax', 'not recorded')}")
    for key, here in cpu.items():
        was, gpu = pinned.get(key), theirs.get(key)
        line = f"    {key}: CPU {here['collectives']}, {here['bytes']:g} B, peak {here['peak']}"
        if was is not None:
            read_same = (was["collectives"], was["bytes"]) == (here["collectives"], here["bytes"])
            line += "; pinned " + ("the same" if read_same else f"{was['collectives']}, {was['bytes']:g} B")
            if was["peak"] != here["peak"]:
                line += f", peak {was['peak']} (this JAX's is {here['peak'] / was['peak']:.2f}x)"
            if not read_same:
                failures.append(f"{key}: this JAX's CPU census differs from the pinned JAX's")
        if gpu is not None:
            line += f"; {accelerator} {gpu['collectives']}, {gpu['bytes']:g} B"
            if gpu["collectives"] != here["collectives"] or gpu["bytes"] != here["bytes"]:
                failures.append(f"{key}: the {accelerator}'s census differs from the CPU's")
        print(line)
    return failures


def run_notebook(path: Path) -> int:
    """A notebook's code cells in order, in this fresh process, as a kernel runs them (a child's part 4)."""
    from autograder.untrusted.runner import run_cells

    cells = [
        {"source": "".join(c["source"])} for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"
    ]
    started = time.perf_counter()
    run = run_cells(cells, {"__name__": "__main__"})
    print(json.dumps({"status": run["status"], "message": run["message"], "seconds": time.perf_counter() - started}))
    return 0


def _notebook(name: str) -> tuple[dict, str]:
    """One notebook run in a child: how it ended, and the line its setup cell printed."""
    path = REPO / name
    try:
        done = _child("--notebook", str(path), cwd=path.parent)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": "ran past 600 s", "seconds": 600}, "no device line"
    lines = done.stdout.strip().splitlines()
    chosen = next((line for line in lines if line.startswith("The course's 8 devices")), "no device line")
    try:
        return json.loads(lines[-1]), chosen
    except (IndexError, ValueError):
        return {"status": "crashed", "message": done.stderr.strip()[-400:], "seconds": 0}, chosen


def notebooks() -> list[str]:
    """Part 4: each notebook in a fresh Python whose JAX has not started, so its setup cell
    chooses; several at once, each child single-minded, so that all 16 fit the check's minutes."""
    failures = []
    with ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) // 2)) as pool:
        runs = list(pool.map(_notebook, NOTEBOOKS))
    for name, (run, chosen) in zip(NOTEBOOKS, runs, strict=True):
        print(f"  {name}: {run['status']} in {run['seconds']:.1f} s. {chosen}")
        if run["status"] != "ok":
            print(f"    {run['message']}")
            failures.append(f"{name}: {run['message']}")
    return failures


def main() -> int:
    if sys.argv[1:2] == ["--notebook"]:
        return run_notebook(Path(sys.argv[2]))
    if sys.argv[1:2] == ["--notebooks"]:
        failures = notebooks()
        print("every notebook ran" if not failures else "stopped:\n  " + "\n  ".join(failures))
        return 1 if failures else 0
    if sys.argv[1:2] == ["--censuses"]:
        print(json.dumps(censuses()))
        return 0
    table_path = Path(sys.argv[2]) if sys.argv[1:2] == ["--table"] else None
    if sys.argv[1:2] == ["--record"]:
        PINNED.write_text(json.dumps({"_jax": jax.__version__, **censuses()}, indent=1, sort_keys=True) + "\n")
        print(f"recorded {PINNED} with JAX {jax.__version__}")
        return 0
    print(f"JAX {jax.__version__}, jaxlib {jax.lib.__version__}; devices: {jax.devices()}")
    failures = []
    first = jax.devices()[0]  # the accelerator's first device, where there is one; then the CPU's
    print("1. FLOPs")
    for device in [first] + ([jax.devices("cpu")[0]] if first.platform != "cpu" else []):
        print(f"{device.platform} ({device.device_kind}):")
        for dtype in (jnp.float32, jnp.bfloat16):
            failures += read(device, dtype)
        if device.platform != "cpu":
            print(f"  one {device.platform} program's HLO, as the counter read it (a matmul):")
            a = jax.device_put(jnp.ones((256, 512)), device)
            text = jax.jit(lambda a: a @ a.T).lower(a).compile().as_text()
            print(
                "\n".join(
                    f"    {line.strip()[:160]}"
                    for line in text.splitlines()
                    if "custom-call" in line or " dot(" in line
                )
            )
    print("2. A ring's census")
    failures += ring_census()
    print("3. The references' censuses")
    failures += compare_censuses(None if first.platform == "cpu" else f"{len(jax.devices())} {first.platform.upper()}")
    print("4. The notebooks")
    failures += notebooks()
    print("5. The model against the machine")
    if first.platform == "gpu":
        table = chip_table.measure(first)
        if table_path:
            table_path.write_text(json.dumps(table, indent=1) + "\n")
        chip_table.against(table)
    else:
        print("  no GPU here: nothing to time")
    print("everything holds" if not failures else "differs or fails:\n  " + "\n  ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
