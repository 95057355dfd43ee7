"""Where a distinct submission's CPU goes: ``jaxcourse grade --profile`` on 01's distinct class
(every exported program the student's own, so every case is compiled), ``--sandbox process
--jobs 2``, both cores busy; prints the profile, then the run's CPU seconds per submission split
into the two jobs each submission costs and the rest (the grading process and the class's fixed
costs spread over its students), since issue 56's 1.5 s has to come out of one of the three.

    .venv/bin/python benchmarks/distinct_profile.py [--students 12]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from grade_throughput import children_cpu, everyone_right, grade, make_class  # noqa: E402

from tests.helpers.course import ASSIGNMENT, copy_course  # noqa: E402

JOBS = ("sandbox: CPU", "trusted: CPU")  # the profile's rows of each job's own CPU, medians


def job_cpu(profile: str, row: str) -> float:
    """The median seconds of ``row`` in a ``--profile`` table; exits if the profile lacks it."""
    found = re.search(rf"^\s*{re.escape(row)}\s+([0-9.]+) s", profile, re.MULTILINE)
    if found is None:
        sys.exit(f"the profile has no {row!r} row; has jaxcourse grade --profile changed its table?")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    args = parser.parse_args()
    if args.students < 1:
        parser.error("--students: grade at least one student")
    with tempfile.TemporaryDirectory() as tmp:
        course = copy_course(Path(tmp) / "course")
        make_class(course, args.students, everyone_right, own_text=True, distinct=True, assignment=ASSIGNMENT)
        graded: list[tuple[float, str]] = []
        cpu = children_cpu(lambda: graded.append(grade(course, "process", 2)))
    out = graded[0][1]
    profile = out[out.index("profile of") :].rstrip()
    print(f"jaxcourse's distinct class of {args.students}, {profile}\n")
    per_submission = cpu / args.students
    jobs = {row: job_cpu(profile, row) for row in JOBS}
    rest = per_submission - sum(jobs.values())
    print(f"CPU seconds per submission, the whole run: {per_submission:.2f} s (issue 56 asks at most 1.5 s)")
    for row, seconds in jobs.items():
        print(f"  {row.split(':')[0]} job (median): {seconds:.2f} s")
    print(f"  the rest (the grading process, the class's fixed costs over {args.students}): {rest:.2f} s")


if __name__ == "__main__":
    main()
