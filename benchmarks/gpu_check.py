"""The project's GPU check, for a session lent a GPU machine: does the grader's reading of compiled
programs hold on the GPU compiler's output and on that machine's JAX? It prints, side by side for
each program, the closed form of its FLOPs, what ``core/flops.py`` counts in the GPU's compiled
HLO (where XLA rewrites dots into cuBLAS calls and Triton fusions), XLA's own cost analysis (which
counts a loop's body once), and the GPU's peak memory; then the same programs' FLOPs and a ring's
census on that JAX's 8 CPU devices, beside the closed forms. Needs only JAX and this checkout's
``autograder/core`` (no other dependency of the package), so it runs with the machine's own JAX:

    python3 benchmarks/gpu_check.py

It exits 1 if any count differs from its closed form. About a minute on an H100.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax

jax.config.update("jax_num_cpu_devices", 8)  # before any backend starts: the course's CPU mesh too

import jax.numpy as jnp  # noqa: E402

from autograder.core.flops import program_flops  # noqa: E402
from autograder.core.hlo import hlo_census  # noqa: E402


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
        ("batched", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (a.reshape(4, 64, 512), jnp.ones((4, 512, 128), dtype)),
         4 * 2 * 64 * 512 * 128),
        ("loop of 6", loop, (jnp.ones((256, 256), dtype),), 2 * 256**3 * 7),
        ("attention", attention, (q, k, v), 2 * (2 * 1024 * 1024 * 64)),
        ("convolution", conv, (x, w), 2 * (8 * 32 * 32 * 32) * (3 * 3 * 16)),
    ]  # fmt: skip


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
        print(f"  {name:12s} {jnp.dtype(dtype).name:9s} closed form {closed:>13,.0f}"
              f"  counted {counted or 0:>13,.0f}  XLA's {xla or 0:>13,.0f}  peak {peak or 0:>11,} B"
              f"  compile {took:.2f} s  {verdict}")  # fmt: skip
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
    print(f"  ring on 8 CPU devices: collectives {got[0]}, bytes per device {got[1]:g}, FLOPs {got[2]:g}; "
          f"closed forms {want[0]}, {want[1]:g}, {want[2]:g}: {'ok' if got == want else 'DIFFERS'}")  # fmt: skip
    return [] if got == want else [f"ring census {got} against {want}"]


def main() -> int:
    print(f"JAX {jax.__version__}, jaxlib {jax.lib.__version__}; devices: {jax.devices()}")
    failures = []
    first = jax.devices()[0]  # the accelerator's first device, where there is one; then the CPU's
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
    failures += ring_census()
    print("every count matches its closed form" if not failures else "differs:\n  " + "\n  ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
