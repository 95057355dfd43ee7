"""What a class run's pages cost the grading process: the package at REV against this checkout,
alternating, on the same graded class.

    .venv/bin/python benchmarks/feedback_pages.py --before REV [--students 12] [--pairs 5]

Grades the throughput benchmark's distinct class of 01_collectives once (``--sandbox process``),
then renders its reports as a class run records them: each student's feedback pages as graded,
then the leaderboard and every page again with its place (``recorder.finish``). Each side runs in
a fresh process, so that nothing it keeps is left from the other's run; prints each side's median
CPU seconds and their ratio.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.grade_throughput import ASSIGNMENT, everyone_right, make_class  # noqa: E402
from benchmarks.revisions import checkout_at  # noqa: E402
from benchmarks.side_by_side import alternating, medians, ratio  # noqa: E402
from tests.helpers.course import copy_course  # noqa: E402

# The package first on the path (this checkout's or REV's), the graded reports read, then the
# clock: each report's pages, the board, and every page again with its place.
CHILD = """
import json, sys, tempfile, time
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from autograder.grading.reports import feedback
from autograder.grading.reports.leaderboard import DEFAULT_RULES, leaderboard
from autograder.grading.submission.report import Report
reports = [Report.from_json(json.loads(Path(p).read_text())) for p in sys.argv[3:]]
with tempfile.TemporaryDirectory() as out:
    start = time.process_time()
    for report in reports:
        feedback.write(Path(out) / report.student, report)
    board = leaderboard(sys.argv[2], reports, DEFAULT_RULES, str)
    for report in reports:
        place = board.standing(report.student) if board is not None else None
        feedback.write(Path(out) / report.student, replace(report, standing=place))
    print(time.process_time() - start)
"""


def graded_class(folder: Path, students: int) -> list[Path]:
    """The distinct class's ``results.json`` files, graded by this checkout."""
    course = copy_course(folder / "course")
    make_class(course, students, everyone_right, own_text=True, distinct=True)
    argv = [sys.executable, "-m", "jaxcourse", "grade", ASSIGNMENT, "--sandbox", "process", "--quiet"]
    subprocess.run(argv, cwd=course.root, check=True, capture_output=True)
    return sorted((course.nbgrader_root / "graded" / ASSIGNMENT).glob("*/results.json"))


def render(package: Path, results: list[Path]) -> float:
    argv = [sys.executable, "-c", CHILD, str(package), ASSIGNMENT, *map(str, results)]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"rendering failed under {package}:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", required=True)
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results = graded_class(folder, args.students)
        packages = {args.before: checkout_at(args.before, folder / "before"), "this checkout": REPO}
        cpu = alternating(packages, args.pairs, lambda package: render(package, results))
    print(
        f"{len(results)} graded reports of {ASSIGNMENT}'s distinct class, pages and board, {args.pairs} pairs, CPU s:"
    )
    print("\n".join(medians(cpu)))
    print(ratio(cpu, "this checkout", args.before))


if __name__ == "__main__":
    main()
