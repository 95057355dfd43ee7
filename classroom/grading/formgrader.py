"""formgrader's Autograde in an instructor's server, without running the student's code there.

nbgrader's autograde executes a submitted notebook in the process that asks (the instructor's
server, with the class directory open) and scores each grade cell by its output. In a class, its
``Execute`` step is replaced by this one (``docker/jupyter/nbgrader_config.py``): the notebook is
asked of the class's grading service (``inbox.py``), graded by the workers in their sandboxes as
on submit, recorded as every grade is (``grading/record/recorder.py``: results.json, the gradebook's
row, once, and only for the latest submission), and each grade cell is given its points as the one
output nbgrader reads (a number: nbgrader's partial credit), for the notebook formgrader shows. A
grade cell starts with an error output, so a cell the report does not score, or a report that
failed, keeps none of its points: nothing here can award a point that the grader did not.
nbgrader's SaveAutoGrades is left out of the steps: it would write the gradebook a second time,
past the recorder's rules (and its auto comments, an untouched answer's "No response.", with it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from autograder.core.course import Course
from autograder.grading.pipeline.grader import grader_for
from autograder.grading.record.recorder import recorder_for
from autograder.grading.submission.report import Report
from autograder.grading.submission.submissions import timestamp as submitted_at
from classroom import environment
from classroom.queue.inbox import Inbox
from classroom.queue.jobs import make_job

from .class_run import job_seconds
from .identity import expected_image, grading_of


class GradedByTheService(Preprocessor):
    """nbgrader's Execute, for a class: the grading service grades, this fills in the points."""

    # nbconvert registers a preprocessor named by its import path as disabled: one that does not
    # run leaves every grade cell without output, which nbgrader scores as full marks.
    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        info = resources["nbgrader"]
        report = self._graded(nb, info["assignment"], info["student"])
        scores: dict[str, float] = {}
        for test in report.tests:
            scores[test.grade_id] = scores.get(test.grade_id, 0.0) + test.score
        why = report.message or "; ".join(f"{t.name}: {t.message}" for t in report.tests if t.message)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            meta = cell.metadata.get("nbgrader", {})
            cell.outputs = []
            if meta.get("grade") and not meta.get("solution"):
                cell.outputs = _scored(scores.get(meta.get("grade_id")), why)
        return nb, resources

    def _graded(self, nb: Any, assignment: str, student: str) -> Report:
        course = Course(Path(os.environ[environment.ROOT]), nbgrader=Path(os.environ[environment.CLASS]))
        grader = grader_for(assignment, course)  # no sandbox: it runs nothing here
        job = make_job(
            assignment, student, nbformat.writes(nb).encode(), None, grading_of(grader, expected_image(course.root))
        )
        inbox = Inbox.of(course.nbgrader_root)
        inbox.ask(job)
        self.log.info("%s/%s: asked of the class's grading service (job %s)", student, assignment, job["id"][:12])
        report = next(inbox.answers([job["id"]], job_seconds(course)))[1]
        if (report.student, report.assignment) == (student, assignment):  # else it graded nothing of hers
            timestamp = submitted_at(course.nbgrader_root / "submitted" / student / assignment / "timestamp.txt")
            notebook = Path(grader.assignment.notebook).stem
            recorder_for(course, assignment, notebook, "formgrader").record(report, timestamp)
        return report


# nbgrader's autograde steps, with its Execute replaced and without its SaveAutoGrades: the
# recorder alone writes the gradebook (docker/jupyter/nbgrader_config.py sets them).
AUTOGRADE_PREPROCESSORS = [
    f"{__name__}.GradedByTheService",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]


def _scored(points: float | None, why: str) -> list[Any]:
    """The outputs nbgrader reads a grade cell's points from: the number, or (not scored) an error."""
    if points is None:
        return [nbformat.v4.new_output("error", ename="NotGraded", evalue=why[:2000] or "not graded", traceback=[])]
    said = [nbformat.v4.new_output("stream", name="stdout", text=why[:2000])] if why else []
    return said + [nbformat.v4.new_output("execute_result", data={"text/plain": f"{points:g}"}, execution_count=1)]
