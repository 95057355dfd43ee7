"""How long `jaxcourse report` and `jaxcourse similar` take on a class of 200. The students are
dealt the grading snapshot's real reports of 01 (wrong submissions and attacks), and for each
graded function a real exported program: the reference's or one of the wrong-submission
library's, as the sandbox exports it, with that function's text in the student's notebook. They
are written as `jaxcourse grade` writes them (results) and as nbgrader collects them (notebooks). Each
command runs end to end, Python's start included; the figure is the median of --repeats runs.

    .venv/bin/python benchmarks/class_report.py [--students 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.mesh import use_cpu_devices  # noqa: E402

use_cpu_devices(8)  # before anything starts JAX

from autograder.grading.record import gradebook  # noqa: E402
from autograder.grading.reports.similarity import exported_nodes  # noqa: E402
from autograder.specs import get  # noqa: E402
from tests.helpers.course import ASSIGNMENT, reference_sources, solved_source, write_submission  # noqa: E402
from tests.helpers.snapshot import records, report_of  # noqa: E402  (real reports, read back)
from tests.helpers.submissions import wrong_submissions  # noqa: E402


class TooLong(Exception):
    pass


def _too_long(signum: int, frame: object) -> None:
    raise TooLong()


def programs() -> dict[str, list[tuple[list[str], str]]]:
    """Per graded function, the programs of the reference and of every wrong submission that
    writes it, exported on the function's first visible case, each with its text."""
    import jax
    import jax.numpy as jnp

    signal.signal(signal.SIGALRM, _too_long)
    found: dict[str, list[tuple[list[str], str]]] = {}
    graded = [w for w in wrong_submissions(ASSIGNMENT) if w.statuses == ("graded",)]
    versions = [reference_sources(ASSIGNMENT)] + [w.functions for w in graded]
    for sources in versions:
        namespace = {"jax": jax, "jnp": jnp}
        for source in {**reference_sources(ASSIGNMENT), **sources}.values():
            exec(source, namespace)  # the notebook's own definitions, in the notebook's order
        for task in get(ASSIGNMENT).tasks:
            if task.kind == "shard_map" and task.name in sources:
                try:
                    signal.alarm(10)  # a function that never ends tracing has no program either
                    nodes = exported_nodes(task, namespace[task.name], ASSIGNMENT)
                except Exception:  # a wrong submission that fails to export has no program
                    continue
                finally:
                    signal.alarm(0)
                if nodes is not None:
                    found.setdefault(task.name, []).append((nodes, sources[task.name]))
    return found


def write_class(out: Path, submitted: Path, students: int) -> None:
    pool = [r for key, r in records().items() if key.startswith((f"{ASSIGNMENT}/process/", "adversarial/"))]
    shapes = programs()
    for i in range(students):
        report = report_of(f"student{i:03d}", ASSIGNMENT, pool[i % len(pool)])
        chosen = {f: versions[(i * 7 + j) % len(versions)] for j, (f, versions) in enumerate(shapes.items())}
        programs_ = {f: nodes for f, (nodes, _) in chosen.items()}
        report = dataclasses.replace(report, programs=programs_ if report.status == "graded" else {})
        gradebook.write_results(out / report.student / "results.json", report)
        # each student's own comment: no two cells are the same text, as in a real class
        texts = {f: f"{text}    # {report.student}\n" for f, (_, text) in chosen.items()}
        write_submission(submitted, report.student, solved_source(ASSIGNMENT, texts))


def median_seconds(argv: list[str], repeats: int) -> float:
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out, submitted = Path(tmp, "out"), Path(tmp, "submitted")
        write_class(out, submitted, args.students)
        command = [sys.executable, "-m", "jaxcourse"]
        report = median_seconds([*command, "report", ASSIGNMENT, "--out", str(out)], args.repeats)
        where = ["--out", str(out), "--submissions", str(submitted), "--json"]
        similar = median_seconds([*command, "similar", ASSIGNMENT, *where], args.repeats)
        size = (out / "report.html").stat().st_size
    print(
        f"{args.students} students, median of {args.repeats} runs, each command end to end (Python's start included):"
    )
    print(f"  jaxcourse report:  {report:.2f} s (a page of {size / 1024:.0f} KiB)")
    print(f"  jaxcourse similar: {similar:.2f} s (every pair of students, every graded function by program and by")
    print("                     text, and the reference's programs exported as the sandbox exports them)")


if __name__ == "__main__":
    main()
