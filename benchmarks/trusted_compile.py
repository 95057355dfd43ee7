"""How long the trusted worker takes to compile a submission's programs: JAX's default compile
against the grader's quick one (``core/quick_compile.py``), and against the quick one with each
option of ``--try`` added, on the same programs.

    .venv/bin/python benchmarks/trusted_compile.py [--students 4] [--try NAME=VALUE ...]

Each student is one of the throughput benchmark's distinct class (the reference's functions with
a harmless difference of their own): every one of 01's array cases is exported as the sandbox
does, then compiled as the trusted side does, in every setting one after another, the order
turned by one for each program (a program's first compile in a process costs more than its
next: whichever setting came first would look slower). Prints the median compile per program
and the sum per submission for each setting, each one's ratio to the quick compile, how many
programs it measured differently from the quick compile, bit for bit, in each thing the grader
reads (census, FLOPs, peak memory, and values where the case runs), and what compiling a trivial
program costs, which every program pays whatever it holds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from autograder.mesh import use_cpu_devices  # noqa: E402

use_cpu_devices(8)  # as the trusted worker has it, before anything starts JAX

from grade_throughput import own_program  # noqa: E402

from autograder.core.flops import program_flops  # noqa: E402
from autograder.core.hlo import hlo_census  # noqa: E402
from autograder.core.quick_compile import known_options  # noqa: E402
from autograder.core.roofline import peak_bytes  # noqa: E402
from autograder.grading.pipeline.grader import grader_for  # noqa: E402
from autograder.harness import shard_map  # noqa: E402
from autograder.harness.shard_map import arg_structs  # noqa: E402
from autograder.mesh import MeshSpec  # noqa: E402
from autograder.trusted.inputs import make_inputs  # noqa: E402
from autograder.trusted.measure import host_value  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course  # noqa: E402

QUICK = "quick"
READ = ("census", "FLOPs", "peak", "values")  # what compile_once reads of a program, in its order


def artifacts(grader, student: int) -> list[tuple[bytes, dict]]:
    """Student ``student``'s exported program for every shard_map case, with its signature."""
    namespace: dict = {}
    exec("import jax, jax.numpy as jnp, numpy as np\n" + "\n".join(own_program(student).values()), namespace)
    return [
        (shard_map.export(namespace[p.sig["function"]], p.sig), p.sig)
        for p in grader.tests
        if p.sig["kind"] == "shard_map"
    ]


def compile_once(data: bytes, sig: dict, options: dict) -> tuple[float, tuple]:
    """Seconds to compile one artifact as the trusted side does, and what the grader reads of it:
    its census, FLOPs and peak, and its values where the case runs (a program at scale never does)."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    exported = jax.export.deserialize(bytearray(data))
    # A program at scale is compiled from shapes alone, as the trusted side does: never made, never run.
    args = arg_structs(sig, mesh) if sig.get("at_scale") else make_inputs(sig, 0, mesh)
    with jax.set_mesh(mesh):
        lowered = jax.jit(exported.call).lower(*args)
        start = time.perf_counter()
        compiled = lowered.compile(options)
        seconds = time.perf_counter() - start
        out = None if sig.get("at_scale") else compiled(*args)
    hlo = compiled.as_text()
    census = hlo_census(hlo, tuple(mesh.devices.shape), tuple(mesh.axis_names))
    values = tuple(host_value(leaf)[0].tobytes() for leaf in jax.tree.leaves(out))
    return seconds, (repr(census.to_json()), program_flops(hlo), peak_bytes(compiled), values)


def _differences(counts: Counter[str], programs: int) -> str:
    return ", ".join(f"{what} of {count} programs" for what, count in counts.items()) or f"none of {programs} programs"


def trivial_compile(options: dict, repeats: int = 9) -> float:
    """Median seconds to compile ``x + i`` (a new program each time): what every program pays."""
    import jax
    import jax.numpy as jnp

    times = []
    for i in range(repeats):
        lowered = jax.jit(lambda x, i=i: x + i).lower(jnp.ones((8, 8)))
        start = time.perf_counter()
        lowered.compile(options)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def option(text: str) -> dict:
    """``NAME=VALUE`` as a compile option: true/false a bool, digits an int, else the string."""
    name, _, value = text.partition("=")
    if not name or not value:
        raise argparse.ArgumentTypeError(f"{text!r}: write an option as NAME=VALUE")
    parsed = {"true": True, "false": False}.get(value.lower(), int(value) if value.lstrip("-").isdigit() else value)
    return {name: parsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=4)
    parser.add_argument("--try", dest="tries", type=option, nargs="*", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    quick = known_options()
    settings = {"default": {}, QUICK: quick}
    settings.update({f"quick + {k}={v}": {**quick, k: v} for extra in args.tries for k, v in extra.items()})
    with tempfile.TemporaryDirectory() as tmp:
        grader = grader_for(ASSIGNMENT, copy_course(Path(tmp)))
        programs = [artifacts(grader, i + 1) for i in range(args.students)]
    names = list(settings)
    times: dict[str, list[float]] = {name: [] for name in names}
    per_submission: dict[str, list[float]] = {name: [] for name in names}
    differ: dict[str, Counter[str]] = {name: Counter() for name in names}
    turn = 0
    for submission in programs:
        totals = dict.fromkeys(names, 0.0)
        for data, sig in submission:
            read = {}
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                seconds, read[name] = compile_once(data, sig, settings[name])
                times[name].append(seconds)
                totals[name] += seconds
            turn += 1
            for name in names:
                differ[name].update(f for f, mine, quick in zip(READ, read[name], read[QUICK]) if mine != quick)
        for name, total in totals.items():
            per_submission[name].append(total)
    n = len(programs[0])
    quick_total = statistics.median(per_submission[QUICK])
    print(f"{args.students} submissions x {n} programs of {ASSIGNMENT}, one process, {os.cpu_count()} cores")
    for name in names:
        total = statistics.median(per_submission[name])
        print(
            f"  {name:50s} compile: median {statistics.median(times[name]) * 1000:6.1f} ms per program, "
            f"{total:.2f} s per submission, {total / quick_total:.2f}x the quick compile; "
            f"measured differently from it: {_differences(differ[name], n * args.students)}"
        )
    fixed = trivial_compile(quick)
    print(
        f"  a trivial program (x + i) compiles in {fixed * 1000:.1f} ms with the quick options: "
        f"{fixed * n:.2f} s of a submission's {quick_total:.2f} s is what {n} programs pay whatever they hold"
    )


if __name__ == "__main__":
    main()
