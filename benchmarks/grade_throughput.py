"""Grade a class with `jaxcourse grade --sandbox docker` and with `nbgrader autograde`: same
submissions, same machine, one run. Prints both wall times and the ratio, where jaxcourse's time
went (its `--profile`), the sandbox's own overhead per submission, and the latency of
`jaxcourse check` on one notebook.

    .venv/bin/python benchmarks/grade_throughput.py [--students 40] [--jobs 2] [--repeats 5]

Two classes. The headline is a realistic one: seven in eight notebooks complete (half right,
the rest wrong in exactly one function, cycling through the library's one-function mistakes),
one in eight broken (raises at import, or unfinished); and every student writes their own text,
a comment with their name atop each of their cells, so that no two notebooks are the same file.
Their programs still coincide where their computations do (an artifact carries no source text),
as right answers to small exercises often do: the profile's "measurements reused" says how often,
and a class whose every program differs would lose that. The second is the older class that leans on
notebooks that fail fast (a quarter right, the rest cycling through mistakes that include the
broken ones), for comparison with earlier figures. The endless loops are left out: they measure
time limits, not throughput. jaxcourse's time includes computing its reference cache, filling
the sandbox's compile cache and starting one container per submission.

Sandbox overhead: the same submission's runner in a container and as a bare local process on the
same CPUs, each `--repeats` times, alternating; the difference of the medians is what isolation
costs. A class run gives each container a CPU quota (1 CPU by default), whose throttling costs a
multi-threaded JAX more than running on one core does: that is shown apart, as a price of the
limit rather than of the isolation.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.grading.classroom import DEFAULT_IMAGE  # noqa: E402
from autograder.mesh import use_cpu_devices  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course, solved_notebook, write_submission  # noqa: E402  (the test helpers build real submissions)
from tests.helpers.submissions import wrong_submission  # noqa: E402

use_cpu_devices(8)  # as the tests have it, before anything starts JAX

FAST_FAILING = (
    "ring_wrong_direction", "uses_all_gather", "ring_sends_twice", "layernorm_gathers_rows",
    "layernorm_wrong_dtype", "fold_wrong_axis", "unfinished_function", "local_shape_no_error",
    "raises_at_import",
)  # fmt: skip
ONE_FUNCTION_WRONG = (
    "ring_wrong_direction", "uses_all_gather", "ring_sends_twice", "ring_direct_sends",
    "layernorm_gathers_rows", "layernorm_wrong_dtype", "fold_wrong_axis", "local_shape_no_error",
)  # fmt: skip
BROKEN = ("raises_at_import", "unfinished_function")


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:5])} failed:\n{done.stderr[-2000:]}")
    return elapsed


def realistic(i: int) -> str | None:
    """Student i's notebook in the realistic class: None for right, else a wrong submission."""
    if i % 8 < 4:
        return None
    return BROKEN[i // 8 % len(BROKEN)] if i % 8 == 7 else ONE_FUNCTION_WRONG[(i // 8 * 3 + i % 8 - 4) % 8]


def fast_failing(i: int) -> str | None:
    return None if i % 4 == 0 else FAST_FAILING[i % len(FAST_FAILING)]


def make_class(course, students: int, which=realistic, own_text: bool = True) -> None:
    submitted = course.nbgrader_root / "submitted"
    for i in range(students):
        name = which(i)
        wrong = wrong_submission(ASSIGNMENT, name) if name else None
        nb = solved_notebook(course, wrong.functions if wrong else None, wrong.extra_cell if wrong else None)
        if own_text:  # each student's cells are their own text: no two notebooks are the same file
            for cell in nb.cells:
                if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = f"# student{i:03d}'s own work\n\n" + cell.source
        write_submission(submitted, f"student{i:03d}", nb)


def sandbox_overhead(course, repeats: int) -> dict[str, float]:
    """Median seconds of one submission's runner, alternating: in a container and as a bare
    process on the same CPUs (every core: what isolation costs), and in a container under a class
    run's CPU quota against a bare process on as many cores (what the quota's throttling adds)."""
    from autograder.grading import submissions as nbio
    from autograder.grading.docker_sandbox import DockerSandbox
    from autograder.grading.grader import grader_for
    from autograder.grading.images import connect
    from autograder.grading.limits import Limits
    from autograder.grading.sandbox import ProcessSandbox

    grader = grader_for(ASSIGNMENT, course)
    notebook = course.nbgrader_root / "submitted" / "student000" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    cells = nbio.code_cells(nbio.read(notebook), grader.source)
    client, mine = connect(), os.sched_getaffinity(0)
    quota = Limits().cpus
    runs = {  # name: (sandbox, cores the runner may use)
        "container, every core": (DockerSandbox(DEFAULT_IMAGE, Limits(cpus=float(len(mine))), client), mine),
        "bare, every core": (ProcessSandbox(), mine),
        "container, class quota": (DockerSandbox(DEFAULT_IMAGE, Limits(), client), mine),
        "bare, as many cores": (ProcessSandbox(), set(sorted(mine)[: max(1, int(quota))])),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (box, cores) in runs.items():
            with tempfile.TemporaryDirectory() as tmp:
                job, out, _ = grader.prepare(cells, Path(tmp))
                os.sched_setaffinity(0, cores)  # a bare runner inherits it
                start = time.perf_counter()
                outcome = box.run(job, out, grader.timeout)
                times[name].append(time.perf_counter() - start)
                os.sched_setaffinity(0, mine)
                assert outcome.status == "ok", outcome
    return {name: statistics.median(t) for name, t in times.items()}


def check_latency(course) -> tuple[float, float]:
    """`jaxcourse check` on a student's copy of the solved notebook, outside the course (the
    release's records, as on a student's machine): first call, compile cache cold; second, warm."""
    with tempfile.TemporaryDirectory() as tmp:
        notebook = Path(tmp) / f"{ASSIGNMENT}.ipynb"
        shutil.copy(course.nbgrader_root / "submitted" / "student000" / ASSIGNMENT / notebook.name, notebook)
        env = {**os.environ, "TMPDIR": tmp, "JAXCOURSE_EXPECTED": str(course.nbgrader_root / "expected")}
        env.pop("JAXCOURSE_ROOT", None)
        argv = [sys.executable, "-m", "autograder.cli", "check", str(notebook)]
        return timed(argv, Path(tmp), env), timed(argv, Path(tmp), env)


def compare(students: int, jobs: int, which, own_text: bool) -> tuple[float, float, str]:
    """jaxcourse's and nbgrader's seconds on one class, and jaxcourse's profile."""
    with tempfile.TemporaryDirectory() as tmp:
        course = copy_course(Path(tmp))
        make_class(course, students, which, own_text)
        python = sys.executable
        start = time.perf_counter()
        done = subprocess.run([python, "-m", "autograder.cli", "grade", ASSIGNMENT, "--sandbox", "docker",
                               "--jobs", str(jobs), "--quiet", "--profile"], cwd=course.root, capture_output=True,
                              text=True)  # fmt: skip
        ours = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"jaxcourse grade failed:\n{done.stderr[-2000:]}")
        theirs = timed([python, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], course.nbgrader_root)
    return ours, theirs, done.stdout[done.stdout.index("profile of") :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.students
    ours, theirs, profile = compare(n, args.jobs, realistic, own_text=True)
    ours_fast, theirs_fast, _ = compare(n, args.jobs, fast_failing, own_text=False)
    with tempfile.TemporaryDirectory() as tmp:
        course = copy_course(Path(tmp))
        make_class(course, 1)
        runner = sandbox_overhead(course, args.repeats)
        cold, warm = check_latency(course)
    print(f"submissions: {n}   cores: {os.cpu_count()}   jaxcourse --sandbox docker --jobs {args.jobs}")
    print("realistic class (7 in 8 complete, every student's own text):")
    print(f"  jaxcourse grade:    {ours:7.1f} s   ({ours / n:.2f} s per submission)")
    print(f"  nbgrader autograde: {theirs:7.1f} s   ({theirs / n:.2f} s per submission)")
    print(f"  throughput ratio jaxcourse / nbgrader: {theirs / ours:.2f}x  (target: at least 5x)")
    print("fast-failing class (a quarter right, copies of the reference):")
    print(f"  jaxcourse {ours_fast:.1f} s, nbgrader {theirs_fast:.1f} s: {theirs_fast / ours_fast:.2f}x")
    isolation = runner["container, every core"] - runner["bare, every core"]
    throttling = runner["container, class quota"] - runner["bare, as many cores"]
    print(f"one submission's runner, median of {args.repeats}: "
          + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in runner.items()))  # fmt: skip
    print(f"  sandbox overhead on the same CPUs {isolation:.2f} s (target: under 0.3 s); "
          f"under the class's CPU quota against as many cores {throttling:.2f} s")  # fmt: skip
    print(f"jaxcourse check on one notebook: {cold:.1f} s cold, {warm:.1f} s warm (targets: 5 s and 2 s)")
    print(f"jaxcourse's realistic class, {profile}")


if __name__ == "__main__":
    main()
