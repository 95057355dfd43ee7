"""Each part's program at a realistic size, projected on real machines (issue 43), and what that
costs the grader: the reference's program at its ``at_scale`` case, exported as a sandbox would
and compiled as the trusted side would (from shapes alone: nothing that size is allocated), and
one submission's grading with its parts at scale and without.

    .venv/bin/python benchmarks/projection.py [--repeats 3]

Prints, per part: its size and why, the export and compile seconds (medians), its peak per device,
FLOPs, bytes per mesh axis and how many of its collectives run beside a matmul; then each machine's
projected time with compute, memory and links apart. Then the median grading of one submission
of 01 whose every program is its own (the throughput benchmark's distinct class: nothing measured
before is reused; the process sandbox, references warm), by a grader that compiles its parts at
scale and one that does not, the same submissions each way, and what the first adds. Last, per
assignment, its parts' export and compile against that grading without them.
"""

from __future__ import annotations

import argparse
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

from autograder.core.course import Course  # noqa: E402
from autograder.core.machines import MACHINES, Grid  # noqa: E402
from autograder.grading.pipeline.grader import grader_for  # noqa: E402
from autograder.grading.reports.scale_view import breakdown  # noqa: E402
from autograder.grading.sandbox.local import ProcessSandbox  # noqa: E402
from autograder.harness.calls import CALLS, signature  # noqa: E402
from autograder.specs import get  # noqa: E402
from autograder.trusted.projection import at_scale  # noqa: E402
from tests.helpers.course import ASSIGNMENTS, copy_course, solved_notebook, write_submission  # noqa: E402

MIB = 2**20


def export_seconds(fn, task) -> float:
    """What the sandbox would spend exporting the part at scale (tracing and lowering only)."""
    start = time.perf_counter()
    CALLS[task.kind].in_sandbox(fn, signature(task, task.at_scale.case), {})
    return time.perf_counter() - start


def part(assignment: str, task, repeats: int) -> float:
    """Print one part's projection; the seconds its export and compile add to a submission."""
    fn = Course(REPO).reference(get(assignment), task.name)
    exports = [export_seconds(fn, task) for _ in range(repeats)]
    runs = [at_scale(fn, task) for _ in range(repeats)]
    scaled, compile_s = runs[0], statistics.median(r.compile_seconds for r in runs)
    cost = scaled.cost
    traffic = ", ".join(f"{axes} {sent / MIB:,.0f} MiB" for axes, sent in cost.traffic.items())
    print(f"\n{assignment} {task.name}: {task.at_scale.case.label()}\n  why: {task.at_scale.why}")
    print(
        f"  export {statistics.median(exports):.2f} s, compile {compile_s:.2f} s; per device: peak "
        f"{(cost.peak or 0) / MIB:,.0f} MiB, {cost.flops / 1e9:,.1f} GFLOP, HBM {cost.hbm_bytes / MIB:,.0f} MiB, "
        f"sends {traffic} in {len(cost.collectives)} collectives, "
        f"{sum(1 for c in cost.collectives if cost.beside(c).flops)} of them beside a matmul"
    )
    for name, p in scaled.everywhere().items():
        print(f"    {name:<32} {p.total_s * 1e3:8.3f} ms = {breakdown(p)}")
    return statistics.median(exports) + compile_s


def grading_seconds(repeats: int) -> tuple[float, float]:
    """The median grading of one distinct submission of 01 without its parts at scale and with
    them, side by side on the same submissions, references computed beforehand."""
    with tempfile.TemporaryDirectory() as tmp:
        course = copy_course(Path(tmp) / "course")
        graders = [
            grader_for("01_collectives", course, Path(tmp) / f"ref-{on}", sandbox=ProcessSandbox(), at_scale=on)
            for on in (False, True)
        ]
        times: list[list[float]] = [[], []]
        for student in range(repeats + 1):  # the first computes the references and fills the caches
            nb = solved_notebook(course, own_program(student), assignment="01_collectives")
            notebook = write_submission(Path(tmp) / "submitted", f"s{student}", nb, "01_collectives")
            for grader, seconds in zip(graders, times):
                start = time.perf_counter()
                report = grader.grade(f"s{student}", notebook)
                seconds.append(time.perf_counter() - start)
                assert report.score == report.max_score, report.message
    without, with_ = (statistics.median(t[1:]) for t in times)
    return without, with_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("machines:")
    for m in MACHINES.values():
        links = [m.network.link] if isinstance(m.network, Grid) else [m.network.nvlink, m.network.nic]
        print(f"  {m.name}: {m.source}; " + "; ".join(f"{k.name}: {k.source}" for k in links if k))
    added = {a: sum(part(a, t, args.repeats) for t in get(a).tasks if t.at_scale is not None) for a in ASSIGNMENTS}
    without, with_ = grading_seconds(args.repeats)
    print(f"\ngrading one distinct submission of 01 (median of {args.repeats}, the same submissions each way):")
    print(f"  without its parts at scale {without:.2f} s, with them {with_:.2f} s: {with_ / without - 1:+.1%}")
    print("each assignment's parts at scale, the reference's exported and compiled, against the first:")
    for assignment, seconds in added.items():
        print(f"  {assignment}: {seconds:.2f} s per submission, {seconds / without:.1%} of it")


if __name__ == "__main__":
    main()
