"""What one distinct submission's trusted job costs in CPU: the package at REV against this
checkout, alternating, on the same job (its cases, artifacts and reference records).

    .venv/bin/python benchmarks/trusted_job.py --before REV [--pairs 8]

The job is the second student's of the throughput benchmark's distinct class (every exported
program the student's own, so every case is compiled), as the grader hands it to its worker.
Each run is a fresh process that imports what the warm trusted server imports, then starts its
clock and runs ``job_process.main`` as a forked child would, in the worker's environment; prints
each side's median CPU seconds, their ratio, and how many programs each compiled.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from grade_throughput import own_program  # noqa: E402
from revisions import checkout_at  # noqa: E402
from side_by_side import alternating, medians, ratio  # noqa: E402

from autograder.grading.pipeline import trusted_worker  # noqa: E402
from autograder.grading.pipeline.grader import grader_for  # noqa: E402
from autograder.grading.pipeline.worker_process import server_command  # noqa: E402
from autograder.grading.sandbox.local import ProcessSandbox  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course, solved_notebook, write_submission  # noqa: E402

# The package first on the path (this checkout's or REV's), then the warm server's imports, then
# the job, timed as a forked child's would be: from after those imports to its end.
CHILD = """
import importlib, json, sys, time
sys.path.insert(0, sys.argv[1])
from autograder.trusted.forkserver import WARM
for module in WARM:
    importlib.import_module(module)
from autograder.trusted import job_process
start = time.process_time()
job_process.main([sys.argv[2]])
print(time.process_time() - start)
"""


def kept_job(folder: Path) -> Path:
    """The second distinct student's measuring job, its artifacts copied beside it (the grader
    removes its own once it has graded)."""
    kept = folder / "job"
    kept.mkdir()
    run_worker = trusted_worker.run_worker

    def keep(job, work, name, deadline):
        copy = json.loads(json.dumps(job))
        for i, test in enumerate(copy.get("tests", [])):
            if "artifact" in test:
                test["artifact"] = str(shutil.copy(test["artifact"], kept / f"artifact{i}"))
        copy["progress"] = str(kept / "progress.jsonl")  # the grader's folder is gone by then
        (kept / "job.json").write_text(json.dumps(copy))
        return run_worker(job, work, name, deadline)

    trusted_worker.run_worker = keep
    course = copy_course(folder / "course")
    grader = grader_for(ASSIGNMENT, course, folder / "cache", sandbox=ProcessSandbox())
    for student in (1, 2):
        notebook = solved_notebook(course, own_program(student))
        grader.grade(f"student{student}", write_submission(folder / "submitted", f"student{student}", notebook))
    trusted_worker.run_worker = run_worker
    return kept / "job.json"


def run_job(package: Path, job: Path, env: dict[str, str]) -> tuple[float, int]:
    """CPU seconds of one run of ``job`` by ``package``, and how many programs it compiled."""
    progress = Path(json.loads(job.read_text())["progress"])
    progress.unlink(missing_ok=True)
    argv = [sys.executable, "-c", CHILD, str(package), str(job)]
    done = subprocess.run(argv, env=env, cwd=env["HOME"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the trusted job failed under {package}:\n{done.stderr[-2000:]}")
    counts = json.loads(progress.read_text().splitlines()[-1])["counts"]
    return float(done.stdout.strip().splitlines()[-1]), counts["programs compiled"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", required=True)
    parser.add_argument("--pairs", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        job = kept_job(folder)
        packages = {args.before: checkout_at(args.before, folder / "before"), "this checkout": REPO}
        env = {**server_command().env, "HOME": str(folder)}
        runs = alternating(packages, args.pairs, lambda package: run_job(package, job, env))
    cpu = {name: [seconds for seconds, _ in done] for name, done in runs.items()}
    print(f"one distinct submission's trusted job ({ASSIGNMENT}), {args.pairs} pairs, CPU seconds:")
    for line, done in zip(medians(cpu), runs.values()):
        print(f"{line}, programs compiled {', '.join(map(str, sorted({programs for _, programs in done})))}")
    print(ratio(cpu, "this checkout", args.before))


if __name__ == "__main__":
    main()
