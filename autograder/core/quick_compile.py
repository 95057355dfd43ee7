"""How the grader compiles. The programs it compiles are small and run a few times, so compiling
is most of their cost: on CPU both its sides (the sandbox's runner and the trusted worker) compile
with LLVM's optimisations off and XLA's loop emitters, which takes about a quarter as long
(benchmarks/trusted_compile.py) and keeps every collective and buffer a census reads
(tests/trusted/test_quick_compile.py). Students' own JupyterLab compiles as JAX does by default."""

from __future__ import annotations

from typing import Any

QUICK_CPU: dict[str, Any] = {
    "xla_backend_optimization_level": 0,  # LLVM's -O0: these programs run once, on small inputs
    # XLA's loop emitters, quicker to compile than MLIR's. Gone by JAX 0.11 (seen on 0.11.2, where
    # an unknown flag stops every process): an upgrade drops it, and test_quick_compile fails first.
    "xla_cpu_use_fusion_emitters": False,
    "xla_cpu_parallel_codegen_split_count": 1,  # one LLVM module: a grader compiles on one thread
}


def compiler_options(mesh: Any) -> dict[str, Any]:
    """The options to compile a program on ``mesh``'s devices with: ``QUICK_CPU`` on CPU."""
    return dict(QUICK_CPU) if mesh.devices.flat[0].platform == "cpu" else {}


def xla_flags() -> str:
    """``QUICK_CPU`` as ``XLA_FLAGS`` spells it, for a process whose JAX has not started (the
    sandbox's CPU-only runner, whose notebook compiles through ``jax.jit`` itself)."""
    return " ".join(f"--{name}={str(value).lower()}" for name, value in QUICK_CPU.items())
