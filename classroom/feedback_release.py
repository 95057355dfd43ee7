"""``jaxcourse release-feedback``: each student's graded feedback where they can read it.

Into nbgrader's own layout (``feedback/<student>/<assignment>/<notebook>.html``), and then to the
class's exchange, filed under that student's latest submission, so that nbgrader's *Fetch
Feedback* shows each student their own page; or into one zip archive (``<student>/<notebook>.html``)
to upload back to an LMS.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from autograder.core.errors import JaxcourseError
from classroom.exchange.store import Store

FEEDBACK = "feedback.html"  # as grading/reports/feedback.py writes it, per student


class FeedbackError(JaxcourseError):
    """Nothing graded to release: the message says what to run first."""


def graded_pages(graded: Path) -> dict[str, Path]:
    """Each graded student's feedback page, from ``jaxcourse grade``'s output folder."""
    pages = {p.parent.name: p for p in sorted(graded.glob(f"*/{FEEDBACK}"))}
    if not pages:
        raise FeedbackError(f"no feedback under {graded}: run `jaxcourse grade` first")
    return pages


def to_nbgrader(pages: dict[str, Path], nbgrader_root: Path, assignment: str, notebook: str) -> None:
    for student, page in pages.items():
        target = nbgrader_root / "feedback" / student / assignment / f"{notebook}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)


def to_exchange(pages: dict[str, Path], store: Store, assignment: str, notebook: str) -> list[str]:
    """Each page under its student's latest submission; returns the students without one."""
    latest = {s.student: s for s in store.submissions(assignment=assignment)}
    missing = []
    for student, page in pages.items():
        if student in latest:
            store.write_feedback(latest[student], {notebook: page.read_text()})
        else:
            missing.append(student)
    return missing


def to_zip(pages: dict[str, Path], archive: Path, notebook: str) -> None:
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for student, page in pages.items():
            zf.write(page, f"{student}/{notebook}.html")
