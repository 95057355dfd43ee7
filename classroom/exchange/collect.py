"""A class's exchange collected into nbgrader's ``submitted/`` layout: each student's latest
submission of an assignment, with its time (the LMS archive's twin, ``autograder.delivery.collect``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.core.files import write_atomic
from autograder.delivery.collect import Collected

from .store import Store


def from_exchange(store: Store, assignment: str, submitted: Path) -> Collected:
    """Each student's latest submission of ``assignment``, with its time in ``timestamp.txt``."""
    latest = {s.student: s for s in store.submissions(assignment=assignment)}  # oldest first: last wins
    done = Collected()
    for student, submission in sorted(latest.items()):
        target = submitted / student / assignment
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(submission.path, target, ignore=shutil.ignore_patterns("submission.json"))
        write_atomic(target / "timestamp.txt", submission.timestamp + "\n")
        done.students.append(student)
    return done
