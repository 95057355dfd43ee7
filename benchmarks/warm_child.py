"""What a forked runner costs in CPU, its server warmed with JAX alone against with everything a
notebook's run imports (``runner.WARM_IMPORTS`` and ``WARM_IF_INSTALLED``), alternating, on the
same job: one solved notebook of 01_collectives, its visible cases, as the sandbox hands it over.

    .venv/bin/python benchmarks/warm_child.py [--pairs 12]

Each child is a fresh process that imports the server's modules, then starts its clock and runs
``runner.main`` as a forked child would; prints each setting's median CPU seconds and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.core.protocol import HIDDEN_PLAN  # noqa: E402
from autograder.grading.pipeline.grader import grader_for  # noqa: E402
from autograder.grading.sandbox import local  # noqa: E402
from autograder.grading.sandbox.local import ProcessSandbox  # noqa: E402
from autograder.untrusted.runner import WARM_IF_INSTALLED, WARM_IMPORTS  # noqa: E402
from benchmarks.side_by_side import alternating, medians, ratio  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course, solved_notebook, write_submission  # noqa: E402

# What the servers imported before 47acc22, named here rather than sliced from WARM_IMPORTS, which
# may grow or reorder: the baseline must stay the one the docs' figures were measured against.
JAX_ALONE = ("jax", "jax.numpy", "numpy", "autograder.harness.calls")
SETTINGS = {"JAX alone": JAX_ALONE, "every import": WARM_IMPORTS + WARM_IF_INSTALLED}
CHILD = """
import importlib, json, os, sys, time
from autograder.core.quick_compile import runner_flags
os.environ["XLA_FLAGS"] = runner_flags()
for module in json.loads(sys.argv[1]):
    importlib.import_module(module)
from autograder.untrusted.runner import main
start = time.process_time()
exit = os._exit
os._exit = lambda code: (print(time.process_time() - start, file=sys.stderr), exit(code))
os._exit(main(sys.argv[2:]) or 0)
"""


def kept_job(folder: Path) -> dict[str, str]:
    """A solved notebook's job, copied into ``folder`` as the grader wrote it for its runner (the
    second student's: the class's compile cache filled), and the runner's environment."""
    kept: dict[str, str] = {}
    run_process = local.run_process

    def keep(argv, home, env, *rest, **options):
        shutil.rmtree(folder / "job", ignore_errors=True)
        shutil.copytree(Path(argv[-3]).parent, folder / "job")
        kept.update(env)
        return run_process(argv, home, env, *rest, **options)

    local.run_process = keep
    course = copy_course(folder / "course")
    grader = grader_for(ASSIGNMENT, course, folder / "cache", sandbox=ProcessSandbox(forks=False))
    for student in ("ann", "bob"):
        grader.grade(student, write_submission(folder, student, solved_notebook(course)))
    local.run_process = run_process
    (folder / "job" / HIDDEN_PLAN).write_text(json.dumps({"tests": []}))  # the visible cases only
    return kept


def child_cpu(folder: Path, env: dict[str, str], modules: tuple[str, ...]) -> float:
    out = folder / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    job = folder / "job"
    argv = [sys.executable, "-S", "-c", CHILD, json.dumps(modules), str(job / "cells.json"), str(job / "plan.json")]
    done = subprocess.run([*argv, str(out)], env=env, cwd=env["HOME"], capture_output=True, text=True, check=True)
    return float(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = kept_job(folder)
        env["HOME"] = str(folder / "home")
        os.makedirs(env["HOME"], exist_ok=True)
        cpu = alternating(SETTINGS, args.pairs, lambda modules: child_cpu(folder, env, modules))
    print(f"one forked runner of {ASSIGNMENT}'s solved notebook (visible cases), {args.pairs} pairs, CPU seconds:")
    print("\n".join(medians({f"server warmed with {name}": runs for name, runs in cpu.items()}, width=32)))
    print(ratio(cpu, "every import", "JAX alone"))


if __name__ == "__main__":
    main()
