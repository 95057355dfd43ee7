"""``jaxcourse worker``: take jobs from the queue and grade each exactly as ``jaxcourse grade``
does (the same ``Grader``, sandbox and trusted side), then hand back the report.

A worker never trusts a job: a malformed or oversized one gets an ``invalid`` report that says
why, and the class goes on. A job graded under other code, another course or another sandbox
environment than this worker's is refused: the worker puts it back for an up-to-date worker,
says why, and stops, so a grade never depends on which host ran it.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder import specs
from autograder.core.course import Course
from autograder.core.errors import JaxcourseError
from autograder.grading.pipeline.grader import Grader, grader_for
from autograder.grading.record.batch import open_sandbox
from autograder.grading.sandbox import limits
from autograder.grading.submission.report import Report
from classroom.queue import liveness
from classroom.queue.app import TASK, make_app, shown
from classroom.queue.jobs import VERSION, Grading, Job, JobError, Outcome, check_job, signed

from .identity import differences, grading_of, image_of

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from celery import Celery


class Refused(JaxcourseError):
    """This worker grades differently from the recorder that sent the job."""


@dataclass
class Worker:
    """One host's grading: its course, its sandbox, one ``Grader`` per assignment (reference
    results computed once per host and cached under ``cache``)."""

    course: Course
    sandbox: str  # docker or process
    image: str  # the sandbox's image
    image_lock: str  # the lock digest the sandbox's image was built from
    cache: Path
    key: bytes  # what its outcomes are signed with (jobs.outcome_key)
    lanes: int = 0  # long-lived sandbox containers per assignment: as many as it grades at once
    hostname: str = field(default_factory=socket.gethostname)
    _graders: dict[str, Grader] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def grader(self, assignment: str) -> Grader:
        with self._lock:
            if assignment not in self._graders:
                lim = limits.load(self.course.root, assignment)  # the sandbox's memory and CPUs
                sandbox = open_sandbox(self.sandbox, self.image, lim, lanes=self.lanes)
                self._graders[assignment] = grader_for(
                    assignment, self.course, self.cache / assignment, sandbox=sandbox
                )
            return self._graders[assignment]

    def grading(self, assignment: str) -> Grading:
        return grading_of(self.grader(assignment), self.image_lock)

    def grade(self, payload: Any, task_id: str) -> Outcome:
        """The outcome of one job; ``Refused`` when this worker must not grade it."""
        start = time.monotonic()
        try:
            job = check_job(payload)
            specs.get(job["assignment"])
        except (JobError, specs.UnknownAssignment) as err:
            return self._outcome(task_id, self._invalid(payload, f"invalid job: {err}"), start)
        ours = self.grading(job["assignment"])
        differ = differences(ours, job["grading"])
        if differ:
            raise Refused(f"worker {self.hostname} refuses job {job['id'][:12]}: it grades with {'; '.join(differ)}")
        return self._outcome(job["id"], self._grade(job), start)

    def _grade(self, job: Job) -> Report:
        grader = self.grader(job["assignment"])
        with tempfile.TemporaryDirectory(prefix="jaxcourse-job-") as tmp:
            notebook = Path(tmp) / grader.assignment.notebook
            notebook.write_text(job["notebook"])
            return grader.grade(job["student"], notebook)

    def _outcome(self, job_id: str, report: Report, start: float) -> Outcome:
        seconds = round(time.monotonic() - start, 3)
        return signed(
            {"version": VERSION, "id": job_id, "worker": self.hostname, "seconds": seconds, "report": report.to_json()},
            self.key,
        )

    def _invalid(self, payload: Any, message: str) -> Report:
        """Zeros for every test of the job's assignment, if it names one, with the reason."""
        student, assignment = _field(payload, "student"), _field(payload, "assignment")
        if assignment in specs.ASSIGNMENTS:
            return self.grader(assignment).failed(student, "invalid", message)
        return Report(student, assignment, "invalid", message)


def _field(payload: Any, name: str) -> str:
    value = payload.get(name) if isinstance(payload, dict) else None
    return value if isinstance(value, str) else "unknown"


def open_worker(course: Course, sandbox: str, image: str, cache: Path | None, key: bytes, lanes: int = 0) -> Worker:
    """A worker whose sandbox image was built from this course's lock, or ``Refused``; ``lanes``:
    for each assignment, that many sandbox containers kept for its submissions."""
    from .identity import expected_image

    box = open_sandbox(sandbox, image, limits.load(course.root, ""))  # says which, once
    if box.name == "docker":
        from autograder.engine.images import connect

        built_from = image_of(connect().images.get(image).labels)
        wanted = expected_image(course.root)
        if built_from != wanted:
            raise Refused(
                f"the sandbox image {image} was built from lock {built_from}, but this course's "
                f"requirements/cpu.lock is {wanted}: rebuild it with `jaxcourse image build --variant cpu`"
            )
    else:
        built_from = "process sandbox"
    cache = cache or Path(tempfile.gettempdir()) / "jaxcourse-worker-cache"
    return Worker(course, box.name, image, built_from, cache, key, lanes)


def serve(worker: Worker, broker: str, concurrency: int, job_seconds: float) -> None:
    """Take jobs from ``broker`` until stopped (Ctrl-C or SIGTERM: the job in hand finishes)."""
    app = make_app(broker, job_seconds)
    register(app, worker, job_seconds)
    stop = threading.Event()
    threading.Thread(
        target=liveness.beat_forever, args=(app.backend.client, worker.hostname, stop), daemon=True
    ).start()
    log.info(
        f"jaxcourse worker {worker.hostname}: {concurrency} at once, {worker.sandbox} sandbox, broker {shown(broker)}"
    )
    app.Worker(
        pool="threads",
        concurrency=concurrency,
        hostname=f"jaxcourse@{worker.hostname}",
        without_gossip=True,
        without_mingle=True,
        loglevel="WARNING",
    ).start()


def register(app: Celery, worker: Worker, job_seconds: float) -> None:
    """The grading task, bound to ``worker``."""
    from celery.exceptions import Reject

    @app.task(name=TASK, bind=True)  # type: ignore[untyped-decorator]  # celery is untyped
    def grade(task: Any, payload: Any) -> Outcome:
        # A job sent again because its worker died may also come back from Redis's own
        # redelivery: once one copy is graded, the other hands back that outcome.
        earlier = app.AsyncResult(task.request.id)
        if earlier.state == "SUCCESS":
            graded: Outcome = earlier.result
            return graded
        liveness.taken(app.backend.client, task.request.id, worker.hostname, job_seconds)
        try:
            return worker.grade(payload, task.request.id)
        except Refused as err:
            log.info(f"jaxcourse worker: {err}; stopping this worker")
            os.kill(os.getpid(), signal.SIGTERM)  # a warm stop: nothing else is taken
            raise Reject(str(err), requeue=True) from None
