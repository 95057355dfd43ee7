"""``jaxcourse grade``: a whole class, in parallel, into the gradebook, CSV, results and feedback.

Submissions use nbgrader's layout, ``SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb``. A
student whose notebook fails to run gets a status and zeros; the others are graded regardless.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.course import Course
from ..core.errors import JaxcourseError
from . import feedback, gradebook, images, limits
from .docker_sandbox import DockerSandbox
from .grader import Grader, grader_for
from .report import Report
from .sandbox import ProcessSandbox, Sandbox
from .submissions import Submission, find_submissions

SANDBOXES = ("auto", "docker", "process")
DEFAULT_IMAGE = images.tag("cpu")

Say = Callable[[str], None]


class SandboxUnavailable(JaxcourseError):
    """``--sandbox docker`` was asked for and no engine or image can serve it."""


@dataclass
class ClassRun:
    """What one ``jaxcourse grade`` did: every report, how many were reused, how long it took."""

    reports: list[Report] = field(default_factory=list)
    reused: int = 0
    seconds: float = 0.0
    sandbox: str = ""
    jobs: int = 1


def open_sandbox(kind: str = "auto", image: str = DEFAULT_IMAGE, lim: limits.Limits | None = None,
                 say: Say = print) -> Sandbox:  # fmt: skip
    """The Docker sandbox when an engine answers (``auto``) or is demanded (``docker``); the
    process sandbox on request or, loudly, when no engine answers."""
    from docker.errors import DockerException

    if kind == "process":
        say("jaxcourse: --sandbox process isolates nothing: student code runs as you, with your files and network")
        return ProcessSandbox()
    try:
        client = images.connect()
        if image == DEFAULT_IMAGE:
            images.ensure("cpu", client, say)
        else:
            client.images.get(image)
    except images.EngineUnavailable as err:
        if kind == "docker":
            raise SandboxUnavailable(f"--sandbox docker needs a Docker engine: {err}") from None
        say(f"jaxcourse: no Docker engine ({err}); grading with --sandbox process, which isolates nothing")
        return ProcessSandbox()
    except (images.ImageError, DockerException) as err:  # not found, or the build failed
        raise SandboxUnavailable(f"no sandbox image {image}: {str(err).splitlines()[0]}") from None
    return DockerSandbox(image, lim or limits.Limits(), client)


def grade_class(
    assignment: str,
    course: Course,
    submissions: Path | None = None,
    out: Path | None = None,
    jobs: int | None = None,
    progress: bool = True,
    sandbox: str = "auto",
    image: str = DEFAULT_IMAGE,
    force: bool = False,
    say: Say = print,
) -> ClassRun:
    """Grade every submission of ``assignment``; write gradebook, grades.csv, results, feedback.

    Each submission is recorded as soon as it is graded, so a run that is killed can be run again:
    it skips what is already graded (unless ``force``, or the notebook changed) and finishes the rest.
    ``jobs`` defaults to as many sandboxes as their CPU quotas fit on this machine.
    """
    start = time.monotonic()
    submissions = submissions or course.nbgrader_root / "submitted"
    out = out or course.nbgrader_root / "graded" / assignment
    if not submissions.is_dir():
        raise FileNotFoundError(f"no submissions directory at {submissions}")
    lim = limits.load(course.root, assignment)
    box = open_sandbox(sandbox, image, lim, say)
    grader = grader_for(assignment, course, timeout=lim.timeout, test_timeout=lim.test_timeout, sandbox=box)
    todo = find_submissions(submissions, assignment, grader.assignment.notebook)
    out.mkdir(parents=True, exist_ok=True)
    run = ClassRun(sandbox=box.name, jobs=jobs or lim.default_jobs())
    with ThreadPoolExecutor(max_workers=run.jobs) as pool, _bar(len(todo), progress) as bar:
        futures = {pool.submit(_grade_one, grader, s, out, force): s for s in todo}
        for future in as_completed(futures):
            report, reused = future.result()
            _record(course, grader, futures[future], report, out)
            run.reports.append(report)
            run.reused += reused
            bar.update(1)
    gradebook.write_csv(out / "grades.csv", run.reports)
    run.seconds = time.monotonic() - start
    return run


def _grade_one(grader: Grader, submission: Submission, out: Path, force: bool) -> tuple[Report, bool]:
    """The previous report when neither the notebook nor the grading changed, else a new one."""
    previous = out / submission.student / "results.json"
    if previous.is_file() and not force:
        try:
            report = Report.from_json(json.loads(previous.read_text()))
        except (ValueError, KeyError, TypeError):
            report = None
        if report and report.fingerprint == grader.fingerprint(submission.notebook):
            return report, True
    return grader.grade(submission.student, submission.notebook), False


def _record(course: Course, grader: Grader, submission: Submission, report: Report, out: Path) -> None:
    """results.json, then feedback, then the gradebook in one transaction: a run killed between
    them finds the results on its next run and records them again."""
    gradebook.write_results(out / report.student / "results.json", report)
    feedback.write(out / report.student, report)
    db_url = f"sqlite:///{course.nbgrader_root / 'gradebook.db'}"
    gradebook.record(db_url, Path(grader.assignment.notebook).stem, report, submission.timestamp)


def _bar(total: int, enabled: bool) -> Any:  # a tqdm bar; tqdm is untyped
    from tqdm import tqdm

    return tqdm(total=total, desc="grading", unit="student", disable=not enabled, file=sys.stderr)


def summary(run: ClassRun) -> str:
    """Graded, failed to run (with reasons), reused, and the time taken."""
    reports = sorted(run.reports, key=lambda r: r.student)
    failed = [r for r in reports if r.status != "graded"]
    lines = [
        f"{len(reports)} submissions in {run.seconds:.1f} s ({run.sandbox} sandbox, {run.jobs} at once): "
        f"{len(reports) - len(failed)} graded, {len(failed)} failed to run"
        + (f", {run.reused} unchanged since the last run" if run.reused else "")
    ]
    width = max((len(r.student) for r in failed), default=0)
    lines += [f"  {r.student:<{width}}  {r.status:<8} {r.message[:160]}" for r in failed]
    return "\n".join(lines)
