"""How long `jaxcourse report` takes on a class of 200: the grading snapshot's real reports of 01
(wrong submissions and attacks) dealt out to 200 students, written as `jaxcourse grade` writes
them, then the command run end to end, median of --repeats runs.

    .venv/bin/python benchmarks/class_report.py [--students 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.grading import gradebook  # noqa: E402
from tests.helpers.course import ASSIGNMENT  # noqa: E402
from tests.helpers.snapshot import records, report_of  # noqa: E402  (real reports, read back)


def write_class(out: Path, students: int) -> None:
    pool = [r for key, r in records().items() if key.startswith((f"{ASSIGNMENT}/process/", "adversarial/"))]
    reports = [report_of(f"student{i:03d}", ASSIGNMENT, pool[i % len(pool)]) for i in range(students)]
    for report in reports:
        gradebook.write_results(out / report.student / "results.json", report)
    gradebook.write_csv(out / "grades.csv", reports)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_class(out, args.students)
        argv = [sys.executable, "-m", "autograder.cli", "report", ASSIGNMENT, "--out", str(out)]
        seconds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            seconds.append(time.perf_counter() - start)
        size = (out / "report.html").stat().st_size
    print(f"jaxcourse report on {args.students} students: median {statistics.median(seconds):.2f} s "
          f"over {args.repeats} runs (the command end to end, Python's start included); page {size / 1024:.0f} KiB")  # fmt: skip


if __name__ == "__main__":
    main()
