"""Grade a class with `jaxcourse grade --sandbox docker` and with `nbgrader autograde`: same
submissions, same machine, one run. Prints both wall times and the ratio, the sandbox's own
overhead per submission, and the latency of `jaxcourse check` on one notebook.

    .venv/bin/python benchmarks/grade_throughput.py [--students 40] [--jobs 2] [--repeats 5]

The class mixes right, wrong and broken notebooks: every fourth is the reference, the rest cycle
through the library's typical mistakes and notebooks that raise or are unfinished. The endless
loops are left out: they measure time limits, not throughput. jaxcourse's time includes computing
its reference cache and starting one container per submission.

Sandbox overhead: the same submission's runner in a container and as a bare local process, each
`--repeats` times, alternating; the difference of the medians is what isolation costs.
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

from autograder.mesh import use_cpu_devices  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course, solved_notebook, write_submission  # noqa: E402  (the test helpers build real submissions)
from tests.helpers.submissions import wrong_submission  # noqa: E402

use_cpu_devices(8)  # as the tests have it, before anything starts JAX

MIX = (
    "ring_wrong_direction", "uses_all_gather", "ring_sends_twice", "layernorm_gathers_rows",
    "layernorm_wrong_dtype", "fold_wrong_axis", "unfinished_function", "local_shape_no_error",
    "raises_at_import",
)  # fmt: skip


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:5])} failed:\n{done.stderr[-2000:]}")
    return elapsed


def make_class(course, students: int) -> None:
    submitted = course.nbgrader_root / "submitted"
    for i in range(students):
        wrong = None if i % 4 == 0 else wrong_submission(ASSIGNMENT, MIX[i % len(MIX)])
        nb = solved_notebook(course, wrong.functions if wrong else None, wrong.extra_cell if wrong else None)
        write_submission(submitted, f"student{i:03d}", nb)


def sandbox_overhead(course, repeats: int) -> tuple[float, float]:
    """Median seconds of one submission's runner in a container and as a bare process."""
    from autograder.grading import submissions as nbio
    from autograder.grading.classroom import open_sandbox
    from autograder.grading.grader import grader_for
    from autograder.grading.sandbox import ProcessSandbox

    grader = grader_for(ASSIGNMENT, course)
    docker, bare = open_sandbox("docker", say=lambda _: None), ProcessSandbox()
    notebook = course.nbgrader_root / "submitted" / "student000" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    cells = nbio.code_cells(nbio.read(notebook), grader.source)
    times: dict[str, list[float]] = {"docker": [], "process": []}
    for _ in range(repeats):
        for name, box in (("docker", docker), ("process", bare)):
            with tempfile.TemporaryDirectory() as tmp:
                job, out, _ = grader.prepare(cells, Path(tmp))
                start = time.perf_counter()
                outcome = box.run(job, out, grader.timeout)
                times[name].append(time.perf_counter() - start)
                assert outcome.status == "ok", outcome
    return statistics.median(times["docker"]), statistics.median(times["process"])


def check_latency(course) -> tuple[float, float]:
    """`jaxcourse check` on a student's copy of the solved notebook, outside the course (public
    oracles, as on a student's machine): first call, reference cache cold; second call, warm."""
    with tempfile.TemporaryDirectory() as tmp:
        notebook = Path(tmp) / f"{ASSIGNMENT}.ipynb"
        shutil.copy(course.nbgrader_root / "submitted" / "student000" / ASSIGNMENT / notebook.name, notebook)
        env = {**os.environ, "TMPDIR": tmp}
        env.pop("JAXCOURSE_ROOT", None)
        argv = [sys.executable, "-m", "autograder.cli", "check", str(notebook)]
        return timed(argv, Path(tmp), env), timed(argv, Path(tmp), env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        course = copy_course(Path(tmp))
        make_class(course, args.students)
        python = sys.executable
        ours = timed([python, "-m", "autograder.cli", "grade", ASSIGNMENT, "--sandbox", "docker",
                      "--jobs", str(args.jobs), "--quiet"], course.root)  # fmt: skip
        theirs = timed([python, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], course.nbgrader_root)
        in_docker, bare = sandbox_overhead(course, args.repeats)
        cold, warm = check_latency(course)
    n = args.students
    print(f"submissions: {n}   cores: {os.cpu_count()}   jaxcourse --sandbox docker --jobs {args.jobs}")
    print(f"jaxcourse grade:    {ours:7.1f} s   ({ours / n:.2f} s per submission)")
    print(f"nbgrader autograde: {theirs:7.1f} s   ({theirs / n:.2f} s per submission)")
    print(f"throughput ratio jaxcourse / nbgrader: {theirs / ours:.2f}x  (target: at least 1.5x)")
    print(f"one submission's runner, median of {args.repeats}: container {in_docker:.2f} s, bare process "
          f"{bare:.2f} s; sandbox overhead {in_docker - bare:.2f} s (target: under 1 s)")  # fmt: skip
    print(f"jaxcourse check on one notebook: {cold:.1f} s cold, {warm:.1f} s warm (target: under 10 s)")


if __name__ == "__main__":
    main()
