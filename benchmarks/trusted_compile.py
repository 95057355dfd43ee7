"""How long the trusted worker takes to compile a submission's programs: JAX's default compile
against the grader's quick one (``core/quick_compile.py``), alternating, on the same programs.

    .venv/bin/python benchmarks/trusted_compile.py [--students 4]

Each student is one of the throughput benchmark's distinct class (the reference's functions with
a harmless difference of their own): every one of 01's array cases is exported as the sandbox
does, then compiled as the trusted side does. Prints the median compile per program and the sum
per submission for each setting, their ratio, and whether the censuses agree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from autograder.mesh import use_cpu_devices  # noqa: E402

use_cpu_devices(8)  # as the trusted worker has it, before anything starts JAX

from grade_throughput import own_program  # noqa: E402

from autograder.core.hlo import hlo_census  # noqa: E402
from autograder.core.quick_compile import known_options  # noqa: E402
from autograder.grading.pipeline.grader import grader_for  # noqa: E402
from autograder.harness import shard_map  # noqa: E402
from autograder.mesh import MeshSpec  # noqa: E402
from autograder.trusted.inputs import make_inputs  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course  # noqa: E402

SETTINGS = {"default": {}, "quick": known_options()}


def artifacts(grader, student: int) -> list[tuple[bytes, dict]]:
    """Student ``student``'s exported program for every shard_map case, with its signature."""
    namespace: dict = {}
    exec("import jax, jax.numpy as jnp, numpy as np\n" + "\n".join(own_program(student).values()), namespace)
    return [
        (shard_map.export(namespace[p.sig["function"]], p.sig), p.sig)
        for p in grader.tests
        if p.sig["kind"] == "shard_map"
    ]


def compile_once(data: bytes, sig: dict, options: dict) -> tuple[float, str]:
    """Seconds to compile one artifact as the trusted side does, and its census."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    exported = jax.export.deserialize(bytearray(data))
    with jax.set_mesh(mesh):
        lowered = jax.jit(exported.call).lower(*make_inputs(sig, 0, mesh))
        start = time.perf_counter()
        compiled = lowered.compile(options)
        seconds = time.perf_counter() - start
    census = hlo_census(compiled.as_text(), tuple(mesh.devices.shape), tuple(mesh.axis_names))
    return seconds, repr(census.to_json())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        grader = grader_for(ASSIGNMENT, copy_course(Path(tmp)))
        programs = [artifacts(grader, i + 1) for i in range(args.students)]
    times: dict[str, list[float]] = {name: [] for name in SETTINGS}
    per_submission: dict[str, list[float]] = {name: [] for name in SETTINGS}
    differ = 0
    for submission in programs:
        totals = dict.fromkeys(SETTINGS, 0.0)
        for data, sig in submission:
            censuses = set()
            for name, options in SETTINGS.items():  # alternating: the machine's noise falls on both
                seconds, census = compile_once(data, sig, options)
                times[name].append(seconds)
                totals[name] += seconds
                censuses.add(census)
            differ += len(censuses) > 1
        for name, total in totals.items():
            per_submission[name].append(total)
    n = len(programs[0])
    print(f"{args.students} submissions x {n} programs of {ASSIGNMENT}, one process, {os.cpu_count()} cores")
    for name in SETTINGS:
        print(
            f"  {name:8s} compile: median {statistics.median(times[name]) * 1000:6.1f} ms per program, "
            f"{statistics.median(per_submission[name]):.2f} s per submission"
        )
    ratio = statistics.median(per_submission["default"]) / statistics.median(per_submission["quick"])
    print(f"  quick compiles {ratio:.2f}x faster; censuses that differ: {differ} of {n * args.students}")


if __name__ == "__main__":
    main()
