"""The class's grading service: every submission that reaches the exchange is graded by the
queue's workers and recorded here, once, by this one recorder.

It watches the exchange's store (no other part tells it anything, so nothing is lost when it
is down: on its next start it finds what is not yet recorded), sends each new submission as a
job, and records each outcome as it arrives: results.json, the student's feedback as the
assignment's rules allow, the gradebook in one transaction, then the store's outcome marker.
A job sent twice (a dead worker, a restarted broker) is recorded once: the marker is written
last, and the dispatcher takes the first outcome for a job's id.

    jaxcourse-grading-service   (started by `jaxcourse hub up`, in its own container)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import logs
from autograder.core.course import Course
from autograder.core.errors import JaxcourseError
from autograder.grading.pipeline.grader import Grader, grader_for
from autograder.grading.record.recorder import Recorder, recorder_for
from autograder.grading.reports import feedback
from autograder.grading.submission import notebooks
from autograder.grading.submission.report import Report
from autograder.specs import UnknownAssignment
from classroom import environment, roster
from classroom.exchange import policy
from classroom.exchange.store import Store, Submission
from classroom.grading.class_run import job_seconds, report_for
from classroom.grading.identity import expected_image, grading_of
from classroom.queue.app import make_app, visibility_timeout
from classroom.queue.dispatch import Dispatcher, Failed
from classroom.queue.inbox import Inbox
from classroom.queue.jobs import Job, Outcome, make_job, outcome_key

log = logging.getLogger(__name__)

POLL = 0.5  # seconds between looks at the store and the results


@dataclass
class GradingService:
    course: Course  # the instructor's checkout, with the class directory as its nbgrader root
    store: Store
    dispatcher: Dispatcher
    graders: dict[str, Grader] = field(default_factory=dict)
    sent: dict[str, Submission] = field(default_factory=dict)  # job id -> submission
    ignored: set[str] = field(default_factory=set)  # submissions said once to be left alone
    asked: set[str] = field(default_factory=set)  # ids of the inbox's jobs sent

    @property
    def inbox(self) -> Inbox:
        return Inbox.of(self.course.nbgrader_root)

    def grader(self, assignment: str) -> Grader:
        """A grader for fingerprints, identities and zero reports: it never runs a notebook here."""
        if assignment not in self.graders:
            self.graders[assignment] = grader_for(assignment, self.course)
        return self.graders[assignment]

    def step(self) -> int:
        """Send what is new, record what has come back; the number recorded. What goes wrong with
        one submission is said and that submission left; the others go on."""
        waiting, recorded, members = set(self.sent.values()), 0, self._members()
        for submission in self.store.submissions():
            if submission in waiting or self.store.recorded(submission):
                continue
            if members is not None and submission.student not in members:
                self._say_once(submission, "not on the class's roster: never graded")
                continue
            with self._alone(submission):
                recorded += self._send(submission)
        self._send_asked()
        for job, outcome in self.dispatcher.poll():
            if job["id"] in self.asked:  # an instructor's server asked for it through the inbox
                self.asked.discard(job["id"])
                self._answer(job, outcome)
            if job["id"] in self.sent:
                submission = self.sent.pop(job["id"])
                with self._alone(submission):
                    self.record(submission, report_for(self.grader(submission.assignment), job, outcome))
                    recorded += 1
        return recorded

    def _send_asked(self) -> None:
        """What instructors' servers ask to have graded (``queue/inbox.py``): sent as any job;
        one that cannot be graded is answered at once with the reason."""
        for job in self.inbox.asked():
            if isinstance(job, tuple):
                job_id, why = job
                self.inbox.answer(job_id, Report("unknown", "unknown", "invalid", why, []))
            elif job["id"] not in self.asked:
                try:
                    self.grader(job["assignment"])
                except UnknownAssignment as err:
                    self.inbox.answer(job["id"], Report(job["student"], job["assignment"], "invalid", str(err), []))
                    continue
                self.asked.add(job["id"])
                self.dispatcher.send(job)

    def _answer(self, job: Job, outcome: Outcome | Failed) -> None:
        try:
            self.inbox.answer(job["id"], report_for(self.grader(job["assignment"]), job, outcome))
        except JaxcourseError as err:
            log.warning(f"jaxcourse grading service: the inbox's job {job['id'][:12]}: {err}")

    def _members(self) -> set[str] | None:
        """The roster's names, read on every pass (``hub up --roster`` may change it); None where
        the class has no roster (a class graded without a hub)."""
        path = self.course.nbgrader_root / "hub" / "roster.json"
        return set(roster.load_hashes(path)) if path.is_file() else None

    def _say_once(self, submission: Submission, why: str) -> None:
        if submission.key not in self.ignored:
            self.ignored.add(submission.key)
            log.warning(f"jaxcourse grading service: {submission.key}: {why}")

    @contextmanager
    def _alone(self, submission: Submission) -> Iterator[None]:
        """A ``JaxcourseError`` while handling ``submission`` is said and stops that submission
        only; it is tried again on the next pass (as for an assignment not yet in the gradebook)."""
        try:
            yield
        except JaxcourseError as err:
            log.warning(f"jaxcourse grading service: {submission.key}: {err}")

    def _send(self, submission: Submission) -> int:
        """Send ``submission`` as a job (0), or record at once (1) one that no grader can read, as
        invalid with its reason: it is never sent."""
        try:
            grader = self.grader(submission.assignment)
        except UnknownAssignment as err:  # no grader will ever know it; other errors are tried again
            self.refuse(submission, str(err))
            return 1
        notebook = submission.path / grader.assignment.notebook
        try:
            data = notebooks.gradable(notebook)
        except notebooks.NotebookError:
            self.record(submission, grader.grade(submission.student, notebook))  # says why; runs nothing
            return 1
        job = make_job(
            submission.assignment,
            submission.student,
            data,
            submission.timestamp,
            grading_of(grader, expected_image(self.course.root)),
        )
        self.sent[job["id"]] = submission
        self.dispatcher.send(job)
        return 0

    def refuse(self, submission: Submission, reason: str) -> None:
        """A submission that cannot be graded at all: the student is told why, in the feedback,
        and its outcome is recorded, so it is never tried again; no gradebook has a place for it.
        Its page is filed under the assignment's name: no notebook of it is known."""
        recorder = self._recorder(submission, submission.assignment)
        report = Report(submission.student, submission.assignment, "invalid", reason, [])
        recorder.refuse(report, self._delivery(submission, recorder))
        self._mark(recorder, submission, report, latest=False)

    def record(self, submission: Submission, report: Report) -> None:
        """Through the one recorder (results, the gradebook for the latest submission only, the
        feedback in the exchange as the rules allow), then the marker that says it is done."""
        notebook = Path(self.grader(submission.assignment).assignment.notebook).stem
        recorder = self._recorder(submission, notebook)
        latest = recorder.record(report, submission.timestamp, self._delivery(submission, recorder))
        self._mark(recorder, submission, report, latest)

    def _recorder(self, submission: Submission, notebook: str) -> Recorder:
        rule = policy.load(self.course.root, submission.assignment).feedback
        return recorder_for(self.course, submission.assignment, notebook, "on submit", rule)

    def _delivery(self, submission: Submission, recorder: Recorder) -> Callable[[Report], None]:
        """The student's page into the exchange, under her submission."""
        return lambda page: self.store.write_feedback(submission, {recorder.notebook: feedback.to_html(page)})

    def _mark(self, recorder: Recorder, submission: Submission, report: Report, latest: bool) -> None:
        """The store's outcome marker (written last: this submission is done) and the journal."""
        outcome = {
            "submission": submission.key,
            "status": report.status,
            "score": report.score,
            "max_score": report.max_score,
            "latest": latest,
        }
        self.store.record_outcome(submission, outcome)
        recorder.journal(outcome)
        log.info(f"recorded {submission.key}: {report.status} {report.score:g}/{report.max_score:g}")

    def run(self, stop: Callable[[], bool] = lambda: False) -> None:
        while not stop():
            try:
                if not self.step():
                    time.sleep(POLL)
            except JaxcourseError as err:  # e.g. an assignment not yet in the gradebook: say, go on
                log.warning(f"jaxcourse grading service: {err}")
                time.sleep(POLL)


def main() -> None:
    logs.configure()
    class_dir = Path(os.environ[environment.CLASS_DIR])
    course = Course(Path(os.environ[environment.ROOT]), nbgrader=class_dir)
    seconds = job_seconds(course)
    broker = os.environ[environment.BROKER]
    dispatcher = Dispatcher(make_app(broker, seconds), 2 * visibility_timeout(seconds), outcome_key(broker))
    service = GradingService(course, Store(class_dir / "exchange"), dispatcher)
    log.info(f"jaxcourse grading service: watching {service.store.root}")
    service.run()
