"""Wall time of grading one 03_multiprocess_training submission: the student's `train` in three
layouts of the same 8-device mesh (1 x 8, 2 x 4, 4 x 2), plus train_step's export and checks.

    .venv/bin/python benchmarks/training_grade.py [--repeats 2]

The reference notebook is graded through the process sandbox and, when a Docker engine answers,
through the docker sandbox (all of a layout's processes in the one container); the reference
results are computed first and not counted. Prints the median of each.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.mesh import use_cpu_devices  # noqa: E402
from tests.helpers.course import solved_source  # noqa: E402  (the tests' real submission)

ASSIGNMENT = "03_multiprocess_training"
use_cpu_devices(8)  # as the tests have it, before anything starts JAX


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import nbformat

    from autograder.core.course import Course
    from autograder.engine import images
    from autograder.grading.pipeline.grader import grader_for
    from autograder.grading.sandbox import limits
    from autograder.grading.sandbox.docker_sandbox import DockerSandbox
    from autograder.grading.sandbox.local import ProcessSandbox

    lim = limits.load(REPO, ASSIGNMENT)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        process = grader_for(
            ASSIGNMENT,
            Course(REPO),
            cache=Path(tmp) / "reference",
            timeout=lim.timeout,
            test_timeout=lim.test_timeout,
            sandbox=ProcessSandbox(),
        )
        print(f"reference results (once, cached): {time.perf_counter() - start:.1f} s")
        graders = {"process": process}
        try:
            client = images.connect()
            graders["docker"] = copy.copy(process)
            graders["docker"].sandbox = DockerSandbox(images.ensure("cpu", client), lim, client)
        except images.EngineUnavailable as err:
            print(f"no Docker engine ({err}): process sandbox only")
        notebook = Path(tmp) / "reference" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        notebook.parent.mkdir(parents=True)
        nbformat.write(solved_source(ASSIGNMENT), notebook)
        for name, grader in graders.items():
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                report = grader.grade("reference", notebook)
                times.append(time.perf_counter() - start)
                assert report.score == report.max_score, report.message
            print(
                f"{name} sandbox: one submission in three layouts: {statistics.median(times):.1f} s "
                f"(median of {args.repeats}; score {report.score:g}/{report.max_score:g})"
            )


if __name__ == "__main__":
    main()
