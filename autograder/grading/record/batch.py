"""``jaxcourse grade``: a whole class, in parallel, into the gradebook, CSV, results and feedback.

Submissions use nbgrader's layout, ``SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb``. A
student whose notebook fails to run gets a status and zeros; the others are graded regardless.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.course import Course
from ...core.errors import JaxcourseError
from ...core.profile import medians
from ...engine import images
from ..pipeline.grader import Grader, grader_for
from ..reports import leaderboard
from ..sandbox import limits
from ..sandbox.docker_sandbox import DockerSandbox
from ..sandbox.local import ProcessSandbox
from ..sandbox.sandbox import Sandbox
from ..submission.report import Report
from ..submission.submissions import Submission, find_submissions
from .recorder import recorder_for

log = logging.getLogger(__name__)

SANDBOXES = ("docker", "process")
DEFAULT_IMAGE = images.tag("cpu")


class SandboxUnavailable(JaxcourseError):
    """The docker sandbox was asked for (the default) and no engine or image can serve it."""


@dataclass
class ClassRun:
    """What one ``jaxcourse grade`` did: every report, how many were reused, how long it took,
    and how it graded ("docker sandbox, 2 at once"; "queue redis://..., 3 workers")."""

    reports: list[Report] = field(default_factory=list)
    reused: int = 0
    seconds: float = 0.0
    how: str = ""


# Grades submissions and yields each with its report as soon as it is done, in any order.
GradeMany = Callable[[Grader, list[Submission]], Iterator[tuple[Submission, Report]]]


def in_threads(jobs: int) -> GradeMany:
    """``jobs`` submissions at once on this machine, each in the grader's sandbox."""

    def grade_many(grader: Grader, todo: list[Submission]) -> Iterator[tuple[Submission, Report]]:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(grader.grade, s.student, s.notebook): s for s in todo}
            for future in as_completed(futures):
                yield futures[future], _report(grader, futures[future], future)

    return grade_many


def _report(grader: Grader, submission: Submission, future: Future[Report]) -> Report:
    """The report of one submission, or, where the grader itself failed on it (a bug of ours,
    which a notebook should never be able to provoke), an ``error`` row: the rest of the class
    is graded regardless. The traceback goes to the instructor's terminal, not to the student."""
    try:
        return future.result()
    except Exception as err:
        log.error(f"jaxcourse: the grader failed on {submission.student}'s submission:", exc_info=err)
        return grader.failed(
            submission.student,
            "error",
            f"the grader failed on this submission ({type(err).__name__}); your instructor has its details",
        )


def open_sandbox(
    kind: str = "docker", image: str = DEFAULT_IMAGE, lim: limits.Limits | None = None, lanes: int = 0
) -> Sandbox:
    """The Docker sandbox (with ``lanes``, that many long-lived containers for a class), or a one-line error where no
    engine or image serves it: grading fails closed. The process sandbox, which isolates
    nothing, only when asked for by name, loudly."""
    from docker.errors import DockerException

    if kind == "process":
        log.warning(
            "jaxcourse: --sandbox process isolates nothing: student code runs as you, with your files and network"
        )
        return ProcessSandbox()
    try:
        client = images.connect()
        if image == DEFAULT_IMAGE:
            images.ensure("cpu", client)
        else:
            client.images.get(image)
    except images.EngineUnavailable as err:
        raise SandboxUnavailable(
            f"grading runs student code in a Docker sandbox, and no engine answers ({err}): start Docker, or "
            "pass --sandbox process to run it unisolated, as you"
        ) from None
    except (images.ImageError, DockerException) as err:  # not found, or the build failed
        raise SandboxUnavailable(f"no sandbox image {image}: {str(err).splitlines()[0]}") from None
    return DockerSandbox(image, lim or limits.Limits(), client, lanes)


def grade_class(
    assignment: str,
    course: Course,
    submissions: Path | None = None,
    out: Path | None = None,
    jobs: int | None = None,
    progress: bool = True,
    sandbox: str = "docker",
    image: str = DEFAULT_IMAGE,
    force: bool = False,
    queue: tuple[GradeMany, str] | None = None,
) -> ClassRun:
    """Grade every submission of ``assignment``; write gradebook, grades.csv, results, feedback.

    Each submission is recorded as soon as it is graded, so a run that is killed can be run again:
    it skips what is already graded (unless ``force``, or the notebook changed) and finishes the rest.
    ``jobs`` defaults to as many sandboxes as their CPU quotas fit on this machine. ``queue``, a
    way to grade elsewhere and its description, replaces the local sandboxes (``queue/``).
    """
    start = time.monotonic()
    submissions = submissions or course.nbgrader_root / "submitted"
    if not submissions.is_dir():
        raise FileNotFoundError(f"no submissions directory at {submissions}")
    lim = limits.load(course.root, assignment)
    if queue is None:
        jobs = jobs or lim.default_jobs()
        box = open_sandbox(sandbox, image, lim, lanes=jobs)
        grade_many, how = in_threads(jobs), f"{box.name} sandbox, {jobs} at once"
    else:
        box, (grade_many, how) = None, queue  # the grader here only fingerprints
    grader = grader_for(assignment, course, sandbox=box)
    todo = find_submissions(submissions, assignment, grader.assignment.notebook)
    recorder = recorder_for(course, assignment, Path(grader.assignment.notebook).stem, "class run", out=out)
    recorder.out.mkdir(parents=True, exist_ok=True)
    run = ClassRun(how=how)
    fresh = []
    closed = contextlib.closing(box) if box is not None else contextlib.nullcontext()
    with _bar(len(todo), progress) as bar, closed:
        for submission in todo:
            previous = None if force else _unchanged(grader, submission, recorder.out)
            if previous is None:
                fresh.append(submission)
                continue
            recorder.record(previous, submission.timestamp)
            run.reports.append(previous)
            run.reused += 1
            bar.update(1)
        for submission, report in grade_many(grader, fresh):
            with report.profile.phase("record"):
                recorder.record(report, submission.timestamp)
            run.reports.append(report)
            bar.update(1)
    recorder.finish(assignment, run.reports, leaderboard.load(course.root, assignment))  # graded, in any order
    run.seconds = time.monotonic() - start
    return run


def _unchanged(grader: Grader, submission: Submission, out: Path) -> Report | None:
    """The previous report when neither the notebook nor the grading changed since."""
    previous = out / submission.student / "results.json"
    if not previous.is_file():
        return None
    try:
        report = Report.from_json(json.loads(previous.read_text()))
    except (ValueError, KeyError, TypeError):
        return None
    return report if report.fingerprint == grader.fingerprint(submission.notebook) else None


def _bar(total: int, enabled: bool) -> Any:  # a tqdm bar; tqdm is untyped
    from tqdm import tqdm

    return tqdm(total=total, desc="grading", unit="student", disable=not enabled, file=sys.stderr)


def profile(run: ClassRun) -> str:
    """Where the time went: each phase's median over the submissions graded in this run."""
    graded_here = [r.profile for r in run.reports if r.profile.seconds]
    if not graded_here:
        return "profile: nothing was graded in this process (reused, or graded on the queue's workers)"
    return medians(graded_here)


def summary(run: ClassRun) -> str:
    """Graded, failed to run (with reasons), reused, and the time taken."""
    reports = sorted(run.reports, key=lambda r: r.student)
    failed = [r for r in reports if r.status != "graded"]
    lines = [
        f"{len(reports)} submissions in {run.seconds:.1f} s ({run.how}): "
        f"{len(reports) - len(failed)} graded, {len(failed)} failed to run"
        + (f", {run.reused} unchanged since the last run" if run.reused else "")
    ]
    width = max((len(r.student) for r in failed), default=0)
    lines += [f"  {r.student:<{width}}  {r.status:<8} {r.message[:160]}" for r in failed]
    return "\n".join(lines)
