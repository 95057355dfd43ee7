"""Grading asked of a class's grading service through the class directory: how an instructor's
server grades without the Docker engine or the queue.

An instructor's server mounts the class directory and nothing of the engine's. To grade, it
writes a job (``jobs.make_job``) into ``CLASS/inbox/<job id>.json``; the grading service sends it
to the queue's workers, who grade it in their sandboxes as they grade every submission, and it
writes the report back as ``<job id>.report.json``. The asker records it (gradebook, results,
feedback) as a local run would. Students' servers never see the class directory.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.core.errors import JaxcourseError
from autograder.core.files import write_atomic
from autograder.grading.submission.report import Report

from .jobs import Job, JobError, check_job

FOLDER = "inbox"
POLL = 0.5  # seconds between looks for answers


class InboxError(JaxcourseError):
    """No answer came in time: the message says what to look at."""


@dataclass(frozen=True)
class Inbox:
    root: Path  # CLASS/inbox

    @classmethod
    def of(cls, class_dir: Path) -> Inbox:
        return cls(class_dir / FOLDER)

    # ---- the asker's side (an instructor's server) ---------------------------------------------

    def ask(self, job: Job) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self._job(job["id"]), json.dumps(job))

    def answers(self, ids: list[str], timeout: float) -> Iterator[tuple[str, Report]]:
        """Each asked job's report as it comes, until all have come; InboxError past ``timeout``."""
        waiting, deadline = set(ids), time.monotonic() + timeout
        while waiting:
            for job_id in sorted(waiting):
                path = self._report(job_id)
                if path.is_file():
                    waiting.discard(job_id)
                    report = Report.from_json(json.loads(path.read_text()))
                    path.unlink(missing_ok=True)
                    yield job_id, report
            if waiting and time.monotonic() > deadline:
                raise InboxError(
                    f"the class's grading service answered none of {len(waiting)} jobs in {timeout:.0f} s: "
                    "is the class up (`jaxcourse hub up`), and its grading service running?"
                )
            if waiting:
                time.sleep(POLL)

    # ---- the grading service's side ------------------------------------------------------------

    def asked(self) -> Iterator[Job | tuple[str, str]]:
        """Each job waiting for a report, or (its id, why it cannot be graded) for a malformed one."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("*.json")):
            job_id = path.name.removesuffix(".json")
            if job_id.endswith(".report") or self._report(job_id).exists():
                continue
            try:
                job = check_job(json.loads(path.read_text()))
            except (JobError, ValueError, UnicodeDecodeError) as err:
                yield job_id, f"the job could not be read: {err}"
                continue
            yield job

    def answer(self, job_id: str, report: Report) -> None:
        """The report, where the asker looks for it; the job is done with."""
        write_atomic(self._report(job_id), json.dumps(report.to_json()))
        self._job(job_id).unlink(missing_ok=True)

    def _job(self, job_id: str) -> Path:
        return self.root / f"{job_id}.json"

    def _report(self, job_id: str) -> Path:
        return self.root / f"{job_id}.report.json"
