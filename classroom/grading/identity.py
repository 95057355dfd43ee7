"""What a grade depends on besides the notebook, as three short digests: the grader's code (and
JAX), the course (solutions, hidden cases, source notebook) and the sandbox's environment (the
lock its image was built from). The recorder puts its own in every job; a worker whose own differ
refuses the job, so a grade never depends on which host ran it."""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path

from autograder.grading.pipeline.grader import Grader
from autograder.grading.sandbox.package import code_text
from classroom.queue.jobs import Grading

LOCK = Path("requirements") / "cpu.lock"  # what the sandbox image is built from (engine/images.py)
IMAGE_LABEL = "org.jaxcourse.lock-sha256"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def grading_of(grader: Grader, image: str) -> Grading:
    """``image``: the lock digest of the sandbox's image (``image_of``)."""
    course = grader.fingerprint_base + json.dumps(grader.source, sort_keys=True, default=str)
    return {"engine": _digest(code_text() + metadata.version("jax")), "course": _digest(course), "image": image}


def expected_image(course_root: Path) -> str:
    """The lock digest the course's image should carry: its checkout's ``requirements/cpu.lock``."""
    path = course_root / LOCK
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else "no lock"


def image_of(labels: dict[str, str] | None) -> str:
    return (labels or {}).get(IMAGE_LABEL, "unlabelled")[:16]


def differences(ours: Grading, theirs: Grading) -> list[str]:
    """The parts that differ, in words: 'engine 3f2a... here, 9b1c... at the recorder'."""
    mine, recorder = dict(ours), dict(theirs)
    return [
        f"{part} {mine[part]} here, {recorder[part]} at the recorder" for part in mine if mine[part] != recorder[part]
    ]
