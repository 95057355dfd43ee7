"""Grade N synthetic submissions with `jaxcourse grade` and with `nbgrader autograde`: same
submissions, same machine, one run. Prints both wall times and the ratio.

    .venv/bin/python benchmarks/grade_throughput.py [--students 6] [--jobs 2]

Submissions cycle through the reference and the library's typical mistakes (wrong values, wrong
collectives, too much traffic, unfinished functions), so both graders see right and wrong code;
the library's endless loops are left out, since they measure time limits, not throughput.
jaxcourse's time includes computing its reference cache.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import (  # noqa: E402  (the test helpers build real submissions)
    ASSIGNMENT, SUBMISSIONS, WrongSubmission, copy_course, solved_notebook, write_submission,
)  # fmt: skip


TYPICAL_MISTAKES = (
    "ring_wrong_direction", "uses_all_gather", "ring_sends_twice", "layernorm_gathers_rows",
    "layernorm_wrong_dtype", "fold_wrong_axis", "unfinished_function", "local_shape_no_error",
)  # fmt: skip


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:4])} failed:\n{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    graded = [WrongSubmission(SUBMISSIONS / f"{name}.py") for name in TYPICAL_MISTAKES]
    with tempfile.TemporaryDirectory() as tmp:
        course = copy_course(Path(tmp))
        submitted = course.nbgrader_root / "submitted"
        for i in range(args.students):
            wrong = None if i % 3 == 0 else graded[i % len(graded)]
            nb = solved_notebook(course, wrong.functions if wrong else None)
            write_submission(submitted, f"student{i:03d}", nb)
        env_python = sys.executable
        ours = timed([env_python, "-m", "autograder.cli", "grade", ASSIGNMENT, "--jobs", str(args.jobs), "--quiet"],
                     course.root)  # fmt: skip
        theirs = timed([env_python, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], course.nbgrader_root)
    print(f"submissions: {args.students}   cores: {os.cpu_count()}   jaxcourse --jobs {args.jobs}")
    print(f"jaxcourse grade:    {ours:7.1f} s   ({ours / args.students:.2f} s per submission)")
    print(f"nbgrader autograde: {theirs:7.1f} s   ({theirs / args.students:.2f} s per submission)")
    print(f"ratio nbgrader / jaxcourse: {theirs / ours:.2f}x  (above 1: jaxcourse is faster)")


if __name__ == "__main__":
    main()
