"""Grade one class here and through the queue, same machine, one run: local `jaxcourse grade
--jobs 2` against Celery workers (1 worker x 2 slots, then 2 workers x 1 slot), each a container
of its own with the Docker engine, grading in the same locked-down sandboxes. Prints wall times,
the queue's overhead per job over local grading, and, from these figures, how many hosts would
grade 5,000 submissions of 01_collectives in 10 minutes and what bounds it.

    .venv/bin/python benchmarks/grade_queue.py [--students 40]

The class is grade_throughput.py's (right, wrong and broken notebooks). Every configuration
starts warm: its reference results and compiled programs were made by grading two submissions
first, as a grading host's are after its first jobs. Each configuration grades the whole class
again (`--force`) into its own output folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.grade_throughput import make_class  # noqa: E402  (the same class as the nbgrader comparison)
from tests.helpers.classroom import class_course, new_class, queue  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course  # noqa: E402

TARGET = (5000, 600.0)  # submissions, seconds


def grade(course, submissions: Path, out: Path, *more: str) -> float:
    env = {**os.environ, "JAXCOURSE_ROOT": str(course.root)}
    argv = [
        sys.executable,
        "-m",
        "jaxcourse",
        "grade",
        ASSIGNMENT,
        "--submissions",
        str(submissions),
        "--out",
        str(out),
        "--quiet",
        "--force",
        *more,
    ]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[3:6])} failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    return elapsed


def scores(out: Path) -> dict[str, float]:
    return {p.parent.name: json.loads(p.read_text())["score"] for p in sorted(out.glob("*/results.json"))}


def on_queue(client, course, tmp: Path, submissions: Path, warm: Path, workers: int, slots: int) -> float:
    """The class graded by ``workers`` worker containers of ``slots`` each; seconds."""
    (course.root / "jaxcourse.toml").write_text(f"[hub]\nworker_concurrency = {slots}\n")
    deployment = new_class(tmp / f"class-{workers}x{slots}", course)
    with queue(client, deployment, "jaxcourse:cpu", workers=workers) as running:
        grade(course, warm, tmp / f"warm-{workers}x{slots}", "--broker", running["broker"])
        for number in range(2, workers + 1):  # every host's cache as warm as the first's
            cache = deployment.classdir.root / "work"
            shutil.copytree(cache / "worker-1" / "cache", cache / f"worker-{number}" / "cache", dirs_exist_ok=True)
        return grade(course, submissions, tmp / f"out-{workers}x{slots}", "--broker", running["broker"])


def recording_seconds(course, out: Path) -> float:
    """Seconds the recorder spends per submission: results, feedback and one gradebook transaction."""
    from autograder.grading.record import gradebook
    from autograder.grading.reports import feedback
    from autograder.grading.submission.report import Report

    reports = [Report.from_json(json.loads(p.read_text())) for p in sorted(out.glob("*/results.json"))]
    db = f"sqlite:///{course.nbgrader_root / 'gradebook.db'}"
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        for report in reports:
            gradebook.write_results(Path(tmp) / report.student / "results.json", report)
            feedback.write(Path(tmp) / report.student, report)
            gradebook.record(db, ASSIGNMENT, report, None)
        return (time.perf_counter() - start) / len(reports)


def reference_seconds(course, cache: Path) -> float:
    """What a new host pays once, before its first grade: the reference results, computed cold."""
    from autograder.grading.pipeline.grader import grader_for

    grader = grader_for(ASSIGNMENT, course, cache)
    start = time.perf_counter()
    assert grader.references
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    args = parser.parse_args()
    from autograder.engine import images

    client = images.connect()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        course = class_course(copy_course(tmp / "course"), "")
        make_class(course, args.students)
        submissions = course.nbgrader_root / "submitted"
        warm = tmp / "warm"
        for student in sorted(p.name for p in submissions.iterdir())[:2]:
            shutil.copytree(submissions / student, warm / student)
        grade(course, warm, tmp / "warm-local", "--sandbox", "docker", "--jobs", "2")
        local = grade(course, submissions, tmp / "out-local", "--sandbox", "docker", "--jobs", "2")
        one_by_two = on_queue(client, course, tmp, submissions, warm, workers=1, slots=2)
        two_by_one = on_queue(client, course, tmp, submissions, warm, workers=2, slots=1)
        same = scores(tmp / "out-local") == scores(tmp / "out-1x2") == scores(tmp / "out-2x1")
        record = recording_seconds(course, tmp / "out-local")
        reference = reference_seconds(course, tmp / "cold-reference")
    n, cores = args.students, os.cpu_count() or 1
    print(f"submissions: {n}   cores: {cores}   docker sandbox; every configuration warm")
    print(f"local  jaxcourse grade --jobs 2:   {local:7.1f} s   ({local / n:.2f} s per submission)")
    print(
        f"queue  1 worker  x 2 slots:        {one_by_two:7.1f} s   (overhead {(one_by_two - local) / n:+.3f} s per job)"
    )
    print(
        f"queue  2 workers x 1 slot:         {two_by_one:7.1f} s   (overhead {(two_by_one - local) / n:+.3f} s per job)"
    )
    print(f"same scores in all three: {same}")
    per_host = n / one_by_two  # submissions per second on one host of this many cores
    wanted = TARGET[0] / TARGET[1]
    print(
        f"\n5,000 submissions in 10 minutes need {wanted:.1f} per second; one {cores}-core host grades "
        f"{per_host:.2f} per second, {per_host / cores:.3f} per core"
    )
    for host_cores in (cores, 16, 64):  # grading is CPU-bound, one sandbox per core: the rate per core holds
        hosts = math.ceil(wanted / (per_host / cores * host_cores))
        print(f"  hosts of {host_cores:2d} cores: {hosts}")
    print(
        f"the one recorder: {record * 1000:.0f} ms per submission, at most {1 / record:.0f} per second "
        f"({'enough' if 1 / record > wanted else 'the bound'})"
    )
    print(
        f"a new host, once: reference results {reference:.1f} s cold ({reference / TARGET[1]:.0%} of the 10 minutes), "
        f"then the image pull (1.25 GB)"
    )


if __name__ == "__main__":
    main()
