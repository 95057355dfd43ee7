"""``jaxcourse grade``: a whole class, in parallel, into the gradebook, CSV, results and feedback.

Submissions use nbgrader's layout, ``SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb``. A
student whose notebook fails to run gets a status and zeros; the others are graded regardless.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from . import feedback, gradebook
from .course import Course
from .grade import Grader, Report, grader_for

DEFAULT_JOBS = max(1, min(4, os.cpu_count() or 1))


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
        if not folder.is_dir():
            continue
        stamp = folder / "timestamp.txt"
        timestamp = stamp.read_text().strip() if stamp.is_file() else None
        found.append(Submission(student_dir.name, folder / notebook, timestamp))
    return found


def grade_class(
    assignment: str,
    course: Course,
    submissions: Path | None = None,
    out: Path | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: bool = True,
) -> list[Report]:
    """Grade every submission of ``assignment``; write gradebook, grades.csv, results, feedback."""
    submissions = submissions or course.nbgrader_root / "submitted"
    out = out or course.nbgrader_root / "graded" / assignment
    if not submissions.is_dir():
        raise FileNotFoundError(f"no submissions directory at {submissions}")
    grader = grader_for(assignment, course)
    todo = find_submissions(submissions, assignment, grader.assignment.notebook)
    out.mkdir(parents=True, exist_ok=True)
    reports = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool, _bar(len(todo), progress) as bar:
        futures = {pool.submit(_grade_one, grader, s, out): s for s in todo}
        for future in as_completed(futures):
            report = future.result()
            _record(course, grader, futures[future], report, out)
            reports.append(report)
            bar.update(1)
    gradebook.write_csv(out / "grades.csv", reports)
    return reports


def _grade_one(grader: Grader, submission: Submission, out: Path) -> Report:
    """Reuse the previous report when neither the notebook nor the grading changed."""
    previous = out / submission.student / "results.json"
    if previous.is_file():
        try:
            report = Report.from_json(json.loads(previous.read_text()))
        except (ValueError, KeyError, TypeError):
            report = None
        if report and report.fingerprint == grader.fingerprint(submission.notebook):
            return report
    return grader.grade(submission.student, submission.notebook)


def _record(course: Course, grader: Grader, submission: Submission, report: Report, out: Path) -> None:
    gradebook.write_results(out / report.student / "results.json", report)
    feedback.write(out / report.student, report)
    db_url = f"sqlite:///{course.nbgrader_root / 'gradebook.db'}"
    gradebook.record(db_url, Path(grader.assignment.notebook).stem, report, submission.timestamp)


def _bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="grading", unit="student", disable=not enabled, file=sys.stderr)


def summary(reports: list[Report]) -> str:
    failed = [r for r in reports if r.status != "graded"]
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.status] = counts.get(r.status, 0) + 1
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"graded {len(reports)} submissions ({parts}); {len(failed)} failed to run"
