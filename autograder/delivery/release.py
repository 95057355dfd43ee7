"""``jaxcourse release``: nbgrader's generate_assignment, a check that nothing leaked, and the
records a student's check judges the visible cases against (``grading/pipeline/expected.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .. import specs
from ..core.course import Course, tool_env
from ..core.errors import JaxcourseError
from ..grading.pipeline import expected

LEAK_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


class ReleaseError(JaxcourseError):
    """nbgrader failed, or the release would show students what they must not see."""


def source_assignments(course: Course) -> list[str]:
    source = course.nbgrader_root / "source"
    return sorted(p.name for p in source.iterdir() if p.is_dir()) if source.is_dir() else []


def release(course: Course, assignment: str | None = None, ship: bool = True) -> list[Path]:
    """Generate ``assignments/release/<assignment>/`` and its shipped records for one assignment,
    or for all of them and the lectures' exercises too. A class (``ship=False``) needs no
    records of its own: its students' image carries the checkout's."""
    known = source_assignments(course)
    names = known if assignment is None else [assignment]
    for name in names:
        if name not in known:
            raise ReleaseError(
                f"no assignment {name!r} under {course.nbgrader_root / 'source'}; known: {', '.join(known)}"
            )
        _generate(course, name)
        if ship:
            expected.ship(course, specs.get(name))
    if assignment is None and ship:
        for exercises in specs.EXERCISES.values():
            expected.ship(course, exercises)
    return [course.nbgrader_root / "release" / name for name in names]


def _generate(course: Course, name: str) -> None:
    argv = [
        sys.executable,
        "-m",
        "nbgrader",
        "generate_assignment",
        name,
        "--force",
        f"--CourseDirectory.root={course.nbgrader_root}",
    ]
    done = subprocess.run(argv, cwd=course.nbgrader_root, capture_output=True, text=True, env=tool_env())
    if done.returncode != 0:
        raise ReleaseError(f"nbgrader generate_assignment {name} failed:\n{done.stderr[-2000:]}")
    leaks = leaked_files(course.nbgrader_root / "release" / name)
    if leaks:
        raise ReleaseError(f"the release of {name} still holds solutions or hidden tests: {leaks}")


def leaked_files(directory: Path) -> list[str]:
    """Files under ``directory`` that contain a solution or hidden-test marker."""
    leaks = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        text = path.read_text(errors="replace")
        if any(marker in text for marker in LEAK_MARKERS):
            leaks.append(str(path.relative_to(directory)))
    return leaks
