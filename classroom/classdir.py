"""A class directory: all of one class's state in one folder, which survives restarts.

It is an nbgrader course root of its own (``nbgrader_config.py``, ``source/`` and ``release/`` as
released to this class, ``submitted/``, ``graded/``, ``feedback/``, ``gradebook.db``), beside the
class's running state::

    exchange/   the exchange's store (delivery/exchange/store.py)
    home/       each student's work folder, mounted into their server
    hub/        the hub's database, cookie secret and the roster's password hashes
    redis/      the grading queue's append-only file
    secrets/    the passwords issued and the queue's password (mode 0700)
    work/       scratch space the grading workers share with the Docker engine (same path)

The instructor's checkout keeps the solutions and the course's sources; ``course()`` joins the two.
"""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from autograder.core.course import CONFIG, Course
from autograder.core.errors import JaxcourseError
from autograder.core.files import write_atomic
from autograder.delivery.release import release
from classroom.exchange.store import Store

STATE = ("exchange", "home", "hub", "redis", "secrets", "work", "submitted", "graded", "feedback")


class ClassDirError(JaxcourseError):
    """The class directory is missing or not one: the message says what to run first."""


@dataclass(frozen=True)
class ClassDir:
    root: Path

    @classmethod
    def open(cls, path: Path) -> ClassDir:
        """An existing class directory, or ClassDirError."""
        found = cls(path.resolve())
        if not (found.root / CONFIG).is_file() or not (found.root / "exchange").is_dir():
            raise ClassDirError(f"{path} is not a class directory: run `jaxcourse hub up --class {path}` first")
        return found

    def init(self, checkout: Course) -> ClassDir:
        """Make the folders and the nbgrader config (the checkout's own); keep what is there."""
        for name in STATE:
            (self.root / name).mkdir(parents=True, exist_ok=True)
        (self.root / "secrets").chmod(0o700)
        if not (self.root / CONFIG).is_file():
            shutil.copy(checkout.nbgrader_root / CONFIG, self.root / CONFIG)
        return self

    @property
    def store(self) -> Store:
        return Store(self.root / "exchange")

    def course(self, checkout: Course) -> Course:
        """The checkout's solutions and config, with this class as the nbgrader root."""
        return Course(checkout.root, nbgrader=self.root)

    def secret(self, name: str) -> str:
        """A secret of this class (the queue's password), made once and kept."""
        path = self.root / "secrets" / name
        if not path.is_file():
            write_atomic(path, secrets.token_urlsafe(24))
            path.chmod(0o600)
        return path.read_text().strip()

    def release(self, checkout: Course, assignment: str) -> Path:
        """Release ``assignment`` to this class: its source as it is now, nbgrader's release
        (which also enters it in the class's gradebook), then the exchange's outbound."""
        source = checkout.nbgrader_root / "source" / assignment
        if not source.is_dir():
            raise ClassDirError(f"no assignment {assignment!r} under {source.parent}")
        target = self.root / "source" / assignment
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        (released,) = release(self.course(checkout), assignment, ship=False)
        return self.store.release(assignment, released)
