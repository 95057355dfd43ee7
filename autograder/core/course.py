"""Where the course lives: the nbgrader root, and the instructor's solutions: references, hidden
cases, closed-form targets and the secret that salts the grader's seeds."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from . import environment
from .errors import JaxcourseError
from .tasks import Assignment, Case, Targets

CONFIG = "nbgrader_config.py"


class CourseError(JaxcourseError):
    """The course directory or the instructor's files cannot be found."""


@dataclass(frozen=True)
class Course:
    """A checkout of the course: ``root/assignments`` (nbgrader) and ``root/solutions``. A class
    keeps its own nbgrader root (``nbgrader``: its gradebook, submissions, source as released)."""

    root: Path
    nbgrader: Path | None = None

    @property
    def nbgrader_root(self) -> Path:
        return self.nbgrader or self.root / "assignments"

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions"

    @classmethod
    def find(cls, start: Path | None = None) -> Course:
        """``JAXCOURSE_ROOT``, or the nearest directory upwards holding assignments/nbgrader_config.py."""
        env = os.environ.get(environment.ROOT)
        here = (start or Path.cwd()).resolve()
        candidates = [Path(env)] if env else [here, *here.parents]
        for path in candidates:
            if (path / "assignments" / CONFIG).is_file():
                return cls(path.resolve())
        raise CourseError(
            "no course found: run from the course checkout or set JAXCOURSE_ROOT "
            "to the directory that holds assignments/nbgrader_config.py"
        )

    def solutions(self, assignment: Assignment) -> ModuleType:
        if not (self.solutions_dir / f"{assignment.solutions}.py").is_file():
            raise CourseError(
                f"no solutions/{assignment.solutions}.py under {self.root}: "
                "grading with hidden tests needs the instructor's checkout"
            )
        self._importable()
        return importlib.import_module(f"solutions.{assignment.solutions}")

    def reference(self, assignment: Assignment, task: str) -> Callable[..., Any]:
        function: Callable[..., Any] = getattr(self.solutions(assignment), task)
        return function

    def hidden_cases(self, assignment: Assignment, task: str) -> tuple[Case, ...]:
        return tuple(getattr(self.solutions(assignment), "HIDDEN_CASES", {}).get(task, ()))

    def targets(self, assignment: Assignment, task: str) -> Targets:
        """The closed forms ``task`` is held to (none for a task that has none)."""
        found: Targets = getattr(self.solutions(assignment), "TARGETS", {}).get(task, Targets())
        return found

    def has_solutions(self, assignment: Assignment) -> bool:
        return bool(assignment.solutions) and (self.solutions_dir / f"{assignment.solutions}.py").is_file()

    def salt(self) -> str:
        """The course's secret (``solutions/__init__.py``'s ``SECRET``): grading seeds are salted
        with it (``tasks.case_seed``), so that no student can know the inputs a grade is decided
        on. Fixed for the course, so grades are reproducible."""
        self._importable()
        secret: str = importlib.import_module("solutions").SECRET
        return secret

    def _importable(self) -> None:
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))


def tool_env() -> dict[str, str]:
    """The environment with this Python's bin directory first on PATH: nbgrader shells out to
    tools such as ``alembic`` by name, and a virtual environment need not be activated."""
    bindir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if bindir not in path.split(os.pathsep):
        path = bindir + os.pathsep + path
    return {**os.environ, "PATH": path}
