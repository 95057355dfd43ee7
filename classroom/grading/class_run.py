"""``jaxcourse grade A --broker URL``: the class graded by the queue's workers, recorded here; and
``--sandbox service``: asked of the class's grading service, which sends it to the same workers.

Each plugs into ``grading.record.batch.grade_class`` as its way of grading, so the run is the same as
a local one in all else: unchanged submissions are skipped, each report is recorded as it
arrives, the summary is the same.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from autograder import specs
from autograder.core.course import Course
from autograder.grading.pipeline.grader import EVALUATOR_STARTUP, Grader
from autograder.grading.record.batch import GradeMany
from autograder.grading.sandbox import limits
from autograder.grading.submission import notebooks
from autograder.grading.submission.report import Report
from autograder.grading.submission.submissions import Submission
from classroom.queue.app import make_app, shown, visibility_timeout
from classroom.queue.dispatch import Dispatcher, Failed
from classroom.queue.inbox import Inbox
from classroom.queue.jobs import Job, Outcome, make_job, outcome_key, report_of

from .identity import expected_image, grading_of

log = logging.getLogger(__name__)


def job_seconds(course: Course) -> float:
    """The longest one job may take, over the course's assignments: the notebook's limit, the
    trusted worker's start-up, and the per-test limit for every test it measures."""
    longest = 0.0
    for assignment in specs.ASSIGNMENTS.values():
        lim = limits.load(course.root, assignment.name)
        hidden = 0
        if course.has_solutions(assignment):
            hidden = sum(len(course.hidden_cases(assignment, t.name)) for t in assignment.tasks)
        tests = sum(len(t.cases) for t in assignment.tasks) + hidden
        longest = max(longest, lim.timeout + EVALUATOR_STARTUP + lim.test_timeout * tests)
    return longest


def on_queue(broker: str, course: Course) -> tuple[GradeMany, str]:
    """A way of grading for ``grade_class``, and its description for the summary."""
    seconds = job_seconds(course)
    dispatcher = Dispatcher(make_app(broker, seconds), 2 * visibility_timeout(seconds), outcome_key(broker))

    def grade_many(grader: Grader, todo: list[Submission]) -> Iterator[tuple[Submission, Report]]:
        unreadable, jobs = _as_jobs(grader, todo, course)
        yield from unreadable
        for _, job in jobs.values():
            dispatcher.send(job)
        for job, outcome in dispatcher.drain():
            yield jobs[job["id"]][0], report_for(grader, job, outcome)

    return grade_many, f"queue {shown(broker)}"


def through_service(course: Course) -> tuple[GradeMany, str]:
    """A way of grading for ``grade_class`` from an instructor's server, which holds neither the
    Docker engine nor the queue: each submission is asked of the class's grading service through
    the class directory (``inbox.py``) and graded by its workers in their sandboxes."""
    inbox = Inbox.of(course.nbgrader_root)
    seconds = job_seconds(course)

    def grade_many(grader: Grader, todo: list[Submission]) -> Iterator[tuple[Submission, Report]]:
        unreadable, jobs = _as_jobs(grader, todo, course)
        yield from unreadable
        for _, job in jobs.values():
            inbox.ask(job)
        for job_id, report in inbox.answers(list(jobs), seconds * max(1, len(jobs))):
            submission, job = jobs[job_id]
            yield submission, _theirs(grader, job, report)

    return grade_many, "the class's grading service"


def _as_jobs(
    grader: Grader, todo: list[Submission], course: Course
) -> tuple[list[tuple[Submission, Report]], dict[str, tuple[Submission, Job]]]:
    """Each submission as a job for the workers, by id; one no grader can read is graded here at
    once (it runs nothing), its report with the reason."""
    grading = grading_of(grader, expected_image(course.root))
    unreadable, jobs = [], {}
    for submission in todo:
        try:
            data = notebooks.gradable(submission.notebook)
        except notebooks.NotebookError:
            unreadable.append((submission, grader.grade(submission.student, submission.notebook)))
            continue
        job = make_job(grader.assignment.name, submission.student, data, submission.timestamp, grading)
        jobs[job["id"]] = (submission, job)
    return unreadable, jobs


def _theirs(grader: Grader, job: Job, report: Report) -> Report:
    """``report`` if it is the job's; else the reason, as an ``error`` report."""
    if (report.student, report.assignment) != (job["student"], job["assignment"]):
        return grader.failed(job["student"], "error", f"the grader graded {report.student}/{report.assignment} instead")
    return report


def report_for(grader: Grader, job: Job, outcome: Outcome | Failed) -> Report:
    """The worker's report, if it is this job's; else the reason, as an ``error`` report. Which
    host graded whom is logged: what a dispute or a fault asks first."""
    if isinstance(outcome, Failed):
        return grader.failed(job["student"], "error", outcome.reason)
    report = _theirs(grader, job, report_of(outcome))
    log.info(
        f"jaxcourse: {job['student']} graded on {outcome['worker']} in {outcome['seconds']:.1f} s: {report.status}"
    )
    return report
