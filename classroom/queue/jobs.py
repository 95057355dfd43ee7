"""What travels on the queue: a job (one submission to grade) and its outcome (the report).

Both are plain JSON with a version, capped in size and checked field by field on arrival, on
whichever side receives them: a worker never trusts a job, the recorder never trusts an outcome.
A job's id is a digest of what it grades, so the same submission sent twice is the same job, and
the recorder records it once. An outcome is signed (HMAC-SHA256) with a key that the workers and
the recorder hold and the broker does not (``JAXCOURSE_QUEUE_KEY``; a class's own secret on a
hub): whoever can write to Redis cannot hand the recorder a grade.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Any, TypedDict
from urllib.parse import urlsplit

from autograder.core.errors import JaxcourseError
from autograder.grading.submission.notebooks import MAX_NOTEBOOK_BYTES
from autograder.grading.submission.report import Report
from classroom import environment

VERSION = 1
MAX_JOB_BYTES = MAX_NOTEBOOK_BYTES + (64 << 10)  # the notebook and a little JSON around it
MAX_OUTCOME_BYTES = 4 << 20  # a report with its feedback pictures is tens of KB


class JobError(JaxcourseError):
    """A job or an outcome that is malformed or too large: the message says which field."""


class Grading(TypedDict):
    """What a grade depends on besides the notebook: a worker that differs refuses the job."""

    engine: str  # the grader's own code and JAX version
    course: str  # the reference solutions, hidden cases and source notebook of the assignment
    image: str  # the lock the sandbox image was built from


class Job(TypedDict):
    version: int
    id: str
    assignment: str
    student: str
    notebook: str  # the submitted notebook's text
    timestamp: str | None
    grading: Grading


class Outcome(TypedDict):
    version: int
    id: str
    worker: str  # the host that graded it
    seconds: float
    report: dict[str, Any]  # Report.to_json()
    signature: str  # HMAC-SHA256 of the rest, with the queue's key


def outcome_key(broker: str) -> bytes:
    """The key outcomes are signed with: ``JAXCOURSE_QUEUE_KEY`` where it is set (a hub sets its
    class's own for the workers and the recorder, never for Redis); else one made from the
    broker's password, so that a queue set up by hand works, and whoever holds that password can
    sign."""
    secret = os.environ.get(environment.QUEUE_KEY) or f"broker:{urlsplit(broker).password or ''}"
    return hashlib.sha256(b"jaxcourse outcome key\0" + secret.encode()).digest()


def signed(outcome: dict[str, Any], key: bytes) -> Outcome:
    """``outcome`` with its signature."""
    done: Outcome = {**outcome, "signature": _signature(outcome, key)}  # type: ignore[typeddict-item]
    return done


def _signature(outcome: dict[str, Any], key: bytes) -> str:
    body = {k: v for k, v in outcome.items() if k != "signature"}
    return hmac.new(key, json.dumps(body, sort_keys=True, separators=(",", ":")).encode(), hashlib.sha256).hexdigest()


def job_id(assignment: str, student: str, notebook: bytes, timestamp: str | None, grading: Grading) -> str:
    """The same submission under the same grading is the same job, wherever it is sent from."""
    digest = hashlib.sha256(json.dumps([assignment, student, timestamp, dict(grading)]).encode())
    digest.update(notebook)
    return digest.hexdigest()[:40]


def make_job(assignment: str, student: str, notebook: bytes, timestamp: str | None, grading: Grading) -> Job:
    if len(notebook) > MAX_NOTEBOOK_BYTES:
        raise JobError(f"the notebook is larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
    try:
        text = notebook.decode("utf-8")
    except UnicodeDecodeError:
        raise JobError("the notebook is not UTF-8 text") from None
    return {
        "version": VERSION,
        "id": job_id(assignment, student, notebook, timestamp, grading),
        "assignment": assignment,
        "student": student,
        "notebook": text,
        "timestamp": timestamp,
        "grading": grading,
    }


def check_job(payload: Any) -> Job:
    """``payload`` as a Job, or JobError naming the first thing wrong with it."""
    _check_size(payload, MAX_JOB_BYTES, "job")
    fields = {"version": int, "id": str, "assignment": str, "student": str, "notebook": str, "grading": dict}
    _check_fields(payload, fields, {"timestamp"}, "job")
    if payload["version"] != VERSION:
        raise JobError(f"job version {payload['version']} is not {VERSION}: the recorder runs other code")
    if payload["timestamp"] is not None and not isinstance(payload["timestamp"], str):
        raise JobError("job field 'timestamp' must be text or null")
    _check_fields(payload["grading"], dict.fromkeys(Grading.__annotations__, str), set(), "job grading")
    if not payload["student"] or "/" in payload["student"] or payload["student"].startswith("."):
        raise JobError(f"job student {payload['student'][:40]!r} is not a name")
    job: Job = payload
    return job


def check_outcome(payload: Any, key: bytes) -> Outcome:
    """``payload`` as an Outcome signed with ``key`` whose report is a well-formed Report, or
    JobError."""
    _check_size(payload, MAX_OUTCOME_BYTES, "outcome")
    fields = {"version": int, "id": str, "worker": str, "seconds": float, "report": dict, "signature": str}
    _check_fields(payload, fields, set(), "outcome")
    if not hmac.compare_digest(payload["signature"], _signature(payload, key)):
        raise JobError("the outcome's signature is wrong: no worker of this class signed it")
    if payload["version"] != VERSION:
        raise JobError(f"outcome version {payload['version']} is not {VERSION}: the worker runs other code")
    try:
        Report.from_json(payload["report"])
    except (KeyError, TypeError, ValueError) as err:
        raise JobError(f"outcome report is malformed ({type(err).__name__}: {err})") from None
    outcome: Outcome = payload
    return outcome


def _check_size(payload: Any, limit: int, what: str) -> None:
    try:
        size = len(json.dumps(payload))
    except (TypeError, ValueError):
        raise JobError(f"the {what} is not JSON") from None
    if size > limit:
        raise JobError(f"the {what} is {size >> 20} MB, more than the {limit >> 20} MB allowed")


def _check_fields(payload: Any, types: dict[str, type], nullable: set[str], what: str) -> None:
    if not isinstance(payload, dict):
        raise JobError(f"the {what} is a {type(payload).__name__}, not an object")
    expected = set(types) | nullable
    if set(payload) != expected:
        odd = sorted(set(payload) ^ expected)
        raise JobError(f"the {what} has the wrong fields: {', '.join(odd)}")
    for name, kind in types.items():
        value = payload[name]
        ok = isinstance(value, (int, float)) if kind is float else isinstance(value, kind)
        if not ok or isinstance(value, bool):
            raise JobError(f"{what} field {name!r} must be {kind.__name__}")


def report_of(outcome: Outcome) -> Report:
    return Report.from_json(outcome["report"])
