"""Grade a class with `jaxcourse grade --sandbox docker` and with `nbgrader autograde`: same
submissions, same machine, one run. Prints both wall times and the ratio, where jaxcourse's time
went (its `--profile`), the sandbox's own overhead per submission, and the latency of
`jaxcourse check` on one notebook.

    .venv/bin/python benchmarks/grade_throughput.py [--students 40] [--jobs 2] [--repeats 5]

Three classes. The shared one is realistic: seven in eight notebooks complete (half right, the
rest wrong in exactly one function, cycling through the library's one-function mistakes), one in
eight broken (raises at import, or unfinished); and every student writes their own text, a
comment with their name atop each of their cells, so that no two notebooks are the same file.
Their programs still coincide where their computations do (an artifact carries no source text),
as right answers to small exercises often do: the profile's "measurements reused" says how often.
The distinct one is the worst case for that: every student right, and every exported program
their own (each function carries a harmless difference of its own, ``own_program``), so nothing
is reused and every measurement is compiled. The third, with ``--fast-failing``, is the older
class that leans on notebooks that fail fast, for comparison with earlier figures. The endless
loops are left out: they measure time limits, not throughput. jaxcourse's time includes computing its reference cache, filling
the sandbox's compile cache and starting one container per submission.

With ``--before REV``, what grading has come to cost since the package at REV (a commit of this
repository): 01's distinct class, 01's and 05's shared ones, each graded by that package and by
this checkout, ``--sandbox process``, alternating, ``--repeats`` times each, in one run; the
medians of the CPU seconds they use per submission, and their ratio (issue 56 asks at most 1.5 s
per distinct submission). Issue 39's measurement of each program's signature (FLOPs, peak,
bytes per mesh axis) was held to under 10% of a class's time this way, on 01_collectives (whose
cases it did not change) and on 05_transformer_parallel (whose hidden cases it made longer).
With ``--before REV --sandbox docker``, 01's two classes in the docker sandbox the same way: the
medians of their wall seconds, each run's beside them, and how much of the machine sat idle
(issue 56 asks both classes within 0.85 of their floor: a change to how a class run keeps its
cores busy shows here, and nowhere in the process sandbox's CPU seconds).

Sandbox overhead: the same submission's runner in a container and as a bare local process on the
same CPUs, each `--repeats` times, alternating; the difference of the medians is what isolation
costs. A class run gives each container a CPU quota (1 CPU by default), whose throttling costs a
multi-threaded JAX more than running on one core does: that is shown apart, as a price of the
limit rather than of the isolation.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.grading.record.batch import DEFAULT_IMAGE  # noqa: E402
from autograder.mesh import use_cpu_devices  # noqa: E402
from benchmarks.machine import host_cpu  # noqa: E402
from benchmarks.revisions import checkout_at, python_for  # noqa: E402
from tests.helpers.course import (  # noqa: E402  (the test helpers build real submissions)
    ASSIGNMENT,
    copy_course,
    reference_sources,
    solved_notebook,
    write_submission,
)
from tests.helpers.submissions import wrong_submission, wrong_submissions  # noqa: E402

use_cpu_devices(8)  # as the tests have it, before anything starts JAX

FAST_FAILING = (
    "ring_wrong_direction",
    "uses_all_gather",
    "ring_sends_twice",
    "layernorm_gathers_rows",
    "layernorm_wrong_dtype",
    "fold_wrong_axis",
    "unfinished_function",
    "local_shape_no_error",
    "raises_at_import",
)
ONE_FUNCTION_WRONG = (
    "ring_wrong_direction",
    "uses_all_gather",
    "ring_sends_twice",
    "ring_direct_sends",
    "layernorm_gathers_rows",
    "layernorm_wrong_dtype",
    "fold_wrong_axis",
    "local_shape_no_error",
)
BROKEN = ("raises_at_import", "unfinished_function")


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:5])} failed:\n{done.stderr[-2000:]}")
    return elapsed


def realistic(i: int) -> str | None:
    """Student i's notebook in the realistic class: None for right, else a wrong submission."""
    if i % 8 < 4:
        return None
    return BROKEN[i // 8 % len(BROKEN)] if i % 8 == 7 else ONE_FUNCTION_WRONG[(i // 8 * 3 + i % 8 - 4) % 8]


def fast_failing(i: int) -> str | None:
    return None if i % 4 == 0 else FAST_FAILING[i % len(FAST_FAILING)]


def everyone_right(i: int) -> str | None:
    return None


# Where each of 01's exported functions takes a harmless difference: its axis index plus a zero
# that is the student's own (axis_index * 0 * i, traced, so the program keeps it).
OWN_INDEX = "jax.lax.axis_index(axis_name) + jax.lax.axis_index(axis_name) * 0 * {i}"
OWN_PROGRAM = {
    "ring_all_gather": ("me = jax.lax.axis_index(axis_name)", "me = " + OWN_INDEX),
    "ring_reduce_scatter": ("me = jax.lax.axis_index(axis_name)", "me = " + OWN_INDEX),
    "sharded_layernorm": ("xf = x.astype(jnp.float32)", "xf = (x + 0 * (" + OWN_INDEX + ")).astype(jnp.float32)"),
    "fold_rng_over_axis": ("jax.lax.axis_index(axis_name))", OWN_INDEX + ")"),
}  # ring_all_reduce is made of the first two; local_shape exports no program


def own_program(i: int) -> dict[str, str]:
    """The reference's functions, each with student ``i``'s harmless difference."""
    sources = reference_sources(ASSIGNMENT)
    for name, (old, new) in OWN_PROGRAM.items():
        assert old in sources[name], f"the reference's {name} changed: update OWN_PROGRAM"
        sources[name] = sources[name].replace(old, new.format(i=i + 1), 1)
    return sources


def make_class(
    course, students: int, which=realistic, own_text: bool = True, distinct: bool = False, assignment: str = ASSIGNMENT
) -> None:
    """``students`` notebooks of ``assignment`` under the course's ``submitted/``: student i's from
    ``which(i)``, a wrong submission of 01's library (another assignment's are its own: ``mixed``)."""
    submitted = course.nbgrader_root / "submitted"
    for i in range(students):
        name = which(i) if assignment == ASSIGNMENT else mixed(assignment, i)
        wrong = wrong_submission(assignment, name) if name else None
        functions = own_program(i) if distinct else wrong.functions if wrong else None
        nb = solved_notebook(course, functions, wrong.extra_cell if wrong else None, assignment)
        if own_text:  # each student's cells are their own text: no two notebooks are the same file
            for cell in nb.cells:
                if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = f"# student{i:03d}'s own work\n\n" + cell.source
        write_submission(submitted, f"student{i:03d}", nb, assignment)


def mixed(assignment: str, i: int) -> str | None:
    """Student i of another assignment's class: half right, the rest its library's graded
    submissions in turn (those that stop a notebook measure time limits, not throughput)."""
    graded = [w.name for w in wrong_submissions(assignment) if w.status == "graded"]
    return None if i % 2 == 0 else graded[i // 2 % len(graded)]


def sandbox_overhead(course, repeats: int) -> dict[str, float]:
    """Median seconds of one submission's runner, alternating: in a container and as a bare
    process on the same CPUs (every core: what isolation costs), and in a container under a class
    run's CPU quota against a bare process on as many cores (what the quota's throttling adds)."""
    from autograder.engine.images import connect
    from autograder.grading.pipeline.grader import grader_for
    from autograder.grading.pipeline.sandboxed import workspace
    from autograder.grading.sandbox.docker_sandbox import DockerSandbox
    from autograder.grading.sandbox.limits import Limits
    from autograder.grading.sandbox.local import ProcessSandbox
    from autograder.grading.submission import notebooks as nbio

    grader = grader_for(ASSIGNMENT, course)
    notebook = course.nbgrader_root / "submitted" / "student000" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    cells = nbio.code_cells(nbio.read(notebook), grader.source)
    client, mine = connect(), os.sched_getaffinity(0)
    quota = Limits().cpus
    runs = {  # name: (sandbox, cores the runner may use)
        "container, every core": (DockerSandbox(DEFAULT_IMAGE, Limits(cpus=float(len(mine))), client), mine),
        "bare, every core": (ProcessSandbox(forks=False), mine),
        "forked, every core": (ProcessSandbox(), mine),  # what --sandbox process runs now
        "container, class quota": (DockerSandbox(DEFAULT_IMAGE, Limits(), client), mine),
        "bare, as many cores": (ProcessSandbox(forks=False), set(sorted(mine)[: max(1, int(quota))])),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (box, cores) in runs.items():
            with tempfile.TemporaryDirectory() as tmp:
                work = workspace(grader, cells, Path(tmp))
                visible_only(work.job)
                os.sched_setaffinity(0, cores)  # a bare runner inherits it
                start = time.perf_counter()
                outcome = box.run(work.job, work.out, grader.timeout)
                times[name].append(time.perf_counter() - start)
                os.sched_setaffinity(0, mine)
                assert outcome.status == "ok", outcome
    return {name: statistics.median(t) for name, t in times.items()}


def visible_only(job: Path) -> None:
    """The runner alone, with no grader to seal its visible results, must not wait for hidden cases."""
    from autograder.core.protocol import PLAN

    plan = json.loads((job / PLAN).read_text())
    plan.pop("hidden_wait", None)
    (job / PLAN).write_text(json.dumps(plan))


def check_latency(course) -> tuple[float, float]:
    """`jaxcourse check` on a student's copy of the solved notebook, outside the course (the
    release's records, as on a student's machine): first call, compile cache cold; second, warm."""
    with tempfile.TemporaryDirectory() as tmp:
        notebook = Path(tmp) / f"{ASSIGNMENT}.ipynb"
        shutil.copy(course.nbgrader_root / "submitted" / "student000" / ASSIGNMENT / notebook.name, notebook)
        env = {**os.environ, "TMPDIR": tmp, "JAXCOURSE_EXPECTED": str(course.nbgrader_root / "expected")}
        env.pop("JAXCOURSE_ROOT", None)
        argv = [sys.executable, "-m", "jaxcourse", "check", str(notebook)]
        return timed(argv, Path(tmp), env), timed(argv, Path(tmp), env)


def compare(students: int, jobs: int, which, own_text: bool, distinct: bool = False) -> Compared:
    """jaxcourse's and nbgrader's seconds on one class, jaxcourse's profile, and its floor."""
    with tempfile.TemporaryDirectory() as tmp:
        course = copy_course(Path(tmp))
        make_class(course, students, which, own_text, distinct)
        ours, profile = grade(course, "docker", jobs)
        theirs = timed([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], course.nbgrader_root)
    with tempfile.TemporaryDirectory() as tmp:  # the same class afresh: nothing measured is reused from the run above
        course = copy_course(Path(tmp))
        make_class(course, students, which, own_text, distinct)
        bare: list[float] = []
        cpu = children_cpu(lambda: bare.append(grade(course, "process", jobs)[0]))
    return Compared(ours, theirs, profile[profile.index("profile of") :], cpu / students, bare[0])


@dataclass(frozen=True)
class Compared:
    ours: float  # jaxcourse grade --sandbox docker, seconds
    theirs: float  # nbgrader autograde, seconds
    profile: str  # jaxcourse's --profile
    cpu: float  # CPU seconds per submission of the same grading without containers (--sandbox process)
    bare: float  # that grading's seconds

    def floor(self, students: int, cores: int) -> float:
        """The least time this grading could take on ``cores`` kept busy, with containers free."""
        return students * self.cpu / cores


def grade(course, sandbox: str, jobs: int) -> tuple[float, str]:
    """``jaxcourse grade`` on the class: its seconds and its --profile, which ends with the CPU
    seconds the whole machine was busy meanwhile (containers included)."""
    start, busy = time.perf_counter(), host_cpu()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxcourse",
            "grade",
            ASSIGNMENT,
            "--sandbox",
            sandbox,
            "--jobs",
            str(jobs),
            "--quiet",
            "--profile",
        ],
        cwd=course.root,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"jaxcourse grade failed:\n{done.stderr[-2000:]}")
    seconds = time.perf_counter() - start
    cores = os.cpu_count() or 1
    used = host_cpu() - busy
    machine = (
        f"  the machine meanwhile: {used:.1f} CPU s busy of {seconds * cores:.1f} ({cores} cores x {seconds:.1f} s), "
        f"{1 - used / (seconds * cores):.0%} idle\n"
    )
    return seconds, done.stdout + machine


SIDES = ("before", "after")


def _per_side() -> dict[str, list[float]]:
    return {side: [] for side in SIDES}


@dataclass(frozen=True)
class Alternated:
    """One class graded by the package at a revision and by this checkout, alternating: per side,
    each run's CPU seconds per submission (its processes', so no container's) and wall seconds,
    and the machine's busy CPU seconds meanwhile (containers included)."""

    cpu: dict[str, list[float]] = field(default_factory=_per_side)
    wall: dict[str, list[float]] = field(default_factory=_per_side)
    busy: dict[str, list[float]] = field(default_factory=_per_side)

    def median(self, figure: str, side: str) -> float:
        return statistics.median(getattr(self, figure)[side])

    def idle(self, side: str) -> float:
        """The median share of the machine's cores that sat idle in a run."""
        cores = os.cpu_count() or 1
        return statistics.median(1 - b / (w * cores) for b, w in zip(self.busy[side], self.wall[side]))


def alternate(
    rev: str,
    assignment: str,
    students: int,
    jobs: int,
    repeats: int,
    distinct: bool = False,
    sandbox: str = "process",
) -> Alternated:
    """One class (the realistic mix, every student's own text; with ``distinct``, the distinct
    class) graded by the package at ``rev`` and by this checkout, alternating and each side first
    in turn, each time in a fresh copy of its course so that nothing measured is reused from a
    run before."""
    with tempfile.TemporaryDirectory() as tmp:
        old = checkout_at(rev, Path(tmp) / "before")
        python = {"before": python_for(old, Path(tmp) / "venv-before"), "after": sys.executable}
        pristine = {"after": Path(tmp) / "after-course", "before": Path(tmp) / "before-course"}
        course = copy_course(pristine["after"])
        which = everyone_right if distinct else realistic
        make_class(course, students, which, own_text=True, distinct=distinct, assignment=assignment)
        made = f"from pathlib import Path; from tests.helpers.course import copy_course; copy_course(Path({str(pristine['before'])!r}))"
        subprocess.run([python["before"], "-c", made], cwd=old, check=True)
        shutil.copytree(course.nbgrader_root / "submitted", pristine["before"] / "assignments" / "submitted")
        runs = Alternated()
        graded: dict[str, set[str]] = {}
        for repeat in range(repeats):
            for which in SIDES if repeat % 2 == 0 else SIDES[::-1]:
                run = Path(tmp) / "run"
                shutil.rmtree(run, ignore_errors=True)
                shutil.copytree(pristine[which], run)
                argv = [python[which], "-m", "jaxcourse", "grade", assignment, "--sandbox", sandbox]
                argv += ["--jobs", str(jobs), "--quiet"]
                wall: list[float] = []
                busy = host_cpu()
                cpu = children_cpu(lambda argv=argv, run=run, wall=wall: wall.append(timed(argv, run)))
                runs.busy[which].append(host_cpu() - busy)
                runs.cpu[which].append(cpu / students)
                runs.wall[which].append(wall[0])
                graded[which] = _graded(run, assignment)
        if graded["before"] != graded["after"] or not graded["after"]:
            sys.exit(f"the two packages did not grade the same students: {graded}; a comparison would mean nothing")
    return runs


def _graded(course_root: Path, assignment: str) -> set[str]:
    """The students a grading run graded (not an error, timeout or crash), from its grades.csv."""
    with open(course_root / "assignments" / "graded" / assignment / "grades.csv") as rows:
        return {row["student_id"] for row in csv.DictReader(rows) if row["status"] == "graded"}


def children_cpu(run) -> float:
    """CPU seconds (user and system) that ``run``'s processes and all they waited for used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def before_and_now(args: argparse.Namespace) -> None:
    """``--before REV``: the process sandbox's CPU seconds per submission of three classes; with
    ``--sandbox docker``, the docker sandbox's wall seconds and idle cores on 01's two classes."""
    n, docker = args.students, args.sandbox == "docker"
    figure = "wall seconds and idle cores" if docker else "CPU seconds per submission"
    print(
        f"{figure}, --sandbox {args.sandbox} --jobs {args.jobs}, medians of {args.repeats}, {n} students each, "
        f"the package at {args.before} against this checkout:"
    )
    classes = ((ASSIGNMENT, True), (ASSIGNMENT, False))
    for assignment, distinct in classes if docker else (*classes, ("05_transformer_parallel", False)):
        runs = alternate(args.before, assignment, n, args.jobs, args.repeats, distinct, args.sandbox)
        before, after = (runs.median("wall" if docker else "cpu", side) for side in SIDES)
        name = f"{assignment}, {'distinct' if distinct else 'shared'} class"
        if docker:
            walls = {side: " ".join(f"{w:.1f}" for w in runs.wall[side]) for side in SIDES}
            print(
                f"  {name}: before {before:.1f} s ({walls['before']}; {runs.idle('before'):.0%} idle), "
                f"now {after:.1f} s ({walls['after']}; {runs.idle('after'):.0%} idle): {after / before:.3f}x"
            )
        else:
            target = " (target: at most 1.5 s)" if distinct else ""
            print(
                f"  {name}: before {before:.2f} s, now {after:.2f} s{target}: {after / before:.3f}x "
                f"({(after / before - 1) * 100:+.1f}%)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--fast-failing", action="store_true", help="grade the older fast-failing class too")
    parser.add_argument("--classes-only", action="store_true", help="skip the sandbox overhead and check latency")
    parser.add_argument("--before", metavar="REV", help="only what grading costs now against the package at REV")
    parser.add_argument(
        "--sandbox", choices=("process", "docker"), default="process", help="with --before: the sandbox to compare in"
    )
    args = parser.parse_args()
    n = args.students
    if args.before:
        before_and_now(args)
        return
    shared = compare(n, args.jobs, realistic, own_text=True)
    distinct = compare(n, args.jobs, everyone_right, own_text=True, distinct=True)
    cores = len(os.sched_getaffinity(0))
    print(f"submissions: {n}   cores: {cores}   jaxcourse --sandbox docker --jobs {args.jobs}")
    for name, run, target in (
        ("shared class (7 in 8 complete, every student's own text)", shared, 8),
        ("distinct class (every student right, every exported program their own)", distinct, 4),
    ):
        floor = run.floor(n, cores)
        print(f"{name}:")
        print(f"  jaxcourse grade:    {run.ours:7.1f} s   ({run.ours / n:.2f} s per submission)")
        print(f"  nbgrader autograde: {run.theirs:7.1f} s   ({run.theirs / n:.2f} s per submission)")
        print(f"  throughput ratio jaxcourse / nbgrader: {run.theirs / run.ours:.2f}x  (target: at least {target}x)")
        print(
            f"  floor: the same grading without containers uses {run.cpu:.2f} CPU s per submission (JAX started, the "
            f"cells, the exports, every measurement), so {n} need {floor:.1f} s on {cores} cores kept busy even with "
            f"containers free: at most {run.theirs / floor:.2f}x here; jaxcourse is {floor / run.ours:.2f} of it "
            f"(target: 0.85)"
        )
        print(
            f"  the bare process: the same grading without containers took {run.bare:.1f} s, so containers cost "
            f"{run.ours / run.bare - 1:+.0%} beyond it"
        )
    if args.fast_failing:
        fast = compare(n, args.jobs, fast_failing, own_text=False)
        print("fast-failing class (a quarter right, copies of the reference):")
        print(f"  jaxcourse {fast.ours:.1f} s, nbgrader {fast.theirs:.1f} s: {fast.theirs / fast.ours:.2f}x")
    if not args.classes_only:
        with tempfile.TemporaryDirectory() as tmp:
            course = copy_course(Path(tmp))
            make_class(course, 1)
            runner = sandbox_overhead(course, args.repeats)
            cold, warm = check_latency(course)
        isolation = runner["container, every core"] - runner["bare, every core"]
        throttling = runner["container, class quota"] - runner["bare, as many cores"]
        print(
            f"one submission's runner, median of {args.repeats}: "
            + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in runner.items())
        )
        print(
            f"  sandbox overhead on the same CPUs {isolation:.2f} s (target: under 0.3 s); "
            f"under the class's CPU quota against as many cores {throttling:.2f} s"
        )
        print(f"jaxcourse check on one notebook: {cold:.1f} s cold, {warm:.1f} s warm (targets: 5 s and 2 s)")
    print(f"jaxcourse's shared class, {shared.profile}")
    print(f"jaxcourse's distinct class, {distinct.profile}")


if __name__ == "__main__":
    main()
