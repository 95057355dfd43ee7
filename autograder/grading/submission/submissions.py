"""Submissions in nbgrader's layout, ``SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb``,
each with the time in its ``timestamp.txt`` where that can be read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core import files

MAX_TIMESTAMP_BYTES = 200


@dataclass(frozen=True)
class Submission:
    student: str
    notebook: Path
    timestamp: str | None


def find_submissions(submissions: Path, assignment: str, notebook: str) -> list[Submission]:
    """Every ``<student>/<assignment>/`` folder; a missing notebook is still a submission to report."""
    found = []
    for student_dir in sorted(p for p in submissions.iterdir() if p.is_dir()):
        folder = student_dir / assignment
        if folder.is_dir():
            found.append(Submission(student_dir.name, folder / notebook, timestamp(folder / "timestamp.txt")))
    return found


def timestamp(path: Path) -> str | None:
    """The submission time written at ``path``, or None where there is none a gradebook can take
    (no file, not a file, not text, not a time): the submission is graded, only not dated."""
    from nbgrader.utils import parse_utc

    try:
        text = files.read_regular(path, MAX_TIMESTAMP_BYTES).decode("utf-8").strip()
        parse_utc(text)
    except (OSError, files.NotRegular, files.TooLarge, UnicodeDecodeError, ValueError, OverflowError):
        return None
    return text or None
