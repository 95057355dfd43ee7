"""The recorder's side of the queue: send jobs, collect each outcome as it arrives, and send again
what never came back.

A job is sent once per id: a marker in Redis (set only if absent, expiring after ``deadline``)
says it is in flight, so a recorder that is killed and run again waits for the jobs its
predecessor sent instead of grading them twice, and picks up results already stored.

A job is sent again when the worker grading it has stopped beating (``queue/liveness.py``:
seconds, where Redis's own redelivery waits out the visibility timeout), or when no outcome has
come by the deadline (the broker lost it), or when its worker raised (a student's notebook
cannot make a worker raise: its failures are in its report; a worker that raises met the broker
restarting or a fault of its own), up to ``ATTEMPTS`` times. The first outcome for an id is the
one recorded; a later one, from a job graded twice, is ignored.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .app import QUEUE, TASK
from .jobs import Job, JobError, Outcome, check_outcome
from .liveness import lost_worker

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from celery import Celery

SENT = "jaxcourse:sent:"  # + job id: in flight until it expires
POLL = 0.2  # seconds between looks at the results
RETRY = 2.0  # seconds to wait while the broker does not answer
ATTEMPTS = 3  # times a job is sent before its worker's failure is recorded as the student's error


@dataclass
class Failed:
    """A job that came back without an outcome to record: the worker raised, or sent garbage."""

    reason: str


@dataclass
class Dispatcher:
    app: Celery
    deadline: float  # seconds after which a job in flight is sent again
    key: bytes  # what outcomes are signed with (jobs.outcome_key)
    pending: dict[str, tuple[Job, float]] = field(default_factory=dict)  # id -> job, when sent
    failures: dict[str, int] = field(default_factory=dict)  # id -> times a worker raised on it

    def send(self, job: Job) -> None:
        """Send ``job`` unless it is already in flight; either way, wait for its outcome."""
        self._send(job, force=False)

    def _send(self, job: Job, force: bool) -> None:
        client = self.app.backend.client
        if client.set(SENT + job["id"], int(time.time()), nx=not force, ex=int(self.deadline)) and not self._stored(
            job["id"]
        ):
            self.app.send_task(TASK, args=[job], task_id=job["id"], queue=QUEUE)
        self.pending[job["id"]] = (job, time.monotonic())

    def _stored(self, job_id: str) -> bool:
        state: str = self.app.AsyncResult(job_id).state
        return state in ("SUCCESS", "FAILURE")

    def poll(self) -> list[tuple[Job, Outcome | Failed]]:
        """The jobs that are done since the last poll; overdue ones are sent again."""
        from kombu.exceptions import OperationalError
        from redis.exceptions import RedisError

        done: list[tuple[Job, Outcome | Failed]] = []
        try:
            for job_id, (job, sent) in list(self.pending.items()):
                result = self.app.AsyncResult(job_id)
                if result.state == "SUCCESS":
                    done.append((job, _outcome(result.result, job, self.key)))
                elif result.state == "FAILURE" and (failed := self._failed(job, str(result.result))) is not None:
                    done.append((job, failed))
                elif (host := lost_worker(self.app.backend.client, job_id)) is not None:
                    log.warning(f"jaxcourse: worker {host} stopped while grading {job['student']}; sending it again")
                    self._send(job, force=True)
                elif time.monotonic() - sent > self.deadline:
                    log.warning(
                        f"jaxcourse: no outcome for {job['student']} after {self.deadline:.0f} s; sending it again"
                    )
                    self._send(job, force=True)
        except (OperationalError, RedisError, ConnectionError) as err:
            log.warning(f"jaxcourse: the broker does not answer ({str(err)[:120]}); retrying")
            time.sleep(RETRY)
        for job, _ in done:
            del self.pending[job["id"]]
        return done

    def _failed(self, job: Job, reason: str) -> Failed | None:
        """The failure to record once the job has failed ``ATTEMPTS`` times; until then, None,
        and the job is sent again (its stored failure forgotten, so it is not picked up as done)."""
        times = self.failures[job["id"]] = self.failures.get(job["id"], 0) + 1
        if times >= ATTEMPTS:
            return Failed(f"the worker failed {times} times: {reason[:300]}")
        log.warning(f"jaxcourse: a worker failed grading {job['student']} ({reason[:120]}); sending it again")
        self.app.AsyncResult(job["id"]).forget()
        self._send(job, force=True)
        return None

    def drain(self) -> Iterator[tuple[Job, Outcome | Failed]]:
        """Every pending job's outcome, as each arrives, until none is pending."""
        while self.pending:
            done = self.poll()
            yield from done
            if not done:
                time.sleep(POLL)


def _outcome(value: Any, job: Job, key: bytes) -> Outcome | Failed:
    try:
        outcome = check_outcome(value, key)
    except JobError as err:
        return Failed(f"the worker sent back a malformed outcome: {err}")
    if outcome["id"] != job["id"]:
        return Failed("the worker sent back another job's outcome")
    return outcome
