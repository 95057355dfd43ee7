"""formgrader's Autograde in an instructor's server runs no student code there: the notebook is
asked of the class's grading service through the class directory, and each grade cell gets the
points the grader gave it, read by nbgrader's own scoring; a cell the report does not score, or a
report that failed, keeps nothing. The service's side is a thread here that answers as the real
one does (the real one grades through the queue in tests/classroom/hub)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import shutil
import threading

import pytest
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import determine_grade, is_grade, is_solution
from traitlets.config import Config

from autograder.core import records
from autograder.core.course import tool_env
from autograder.grading.pipeline.grader import grader_for
from autograder.grading.sandbox.local import ProcessSandbox
from autograder.grading.submission.report import Report
from classroom.grading.formgrader import AUTOGRADE_PREPROCESSORS, GradedByTheService
from classroom.queue.inbox import Inbox

from ...helpers.course import ASSIGNMENT, full_marks, solved_notebook, source_notebook, total, write_submission
from ...helpers.submissions import wrong_submission


def _answering(class_dir, report_of):
    """A stand-in service: answers the one job the inbox gets with ``report_of(job)``."""
    inbox, stop = Inbox.of(class_dir), threading.Event()

    def serve():
        while not stop.is_set():
            for job in inbox.asked():
                inbox.answer(job["id"], report_of(job))
                return
            stop.wait(0.05)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return stop


def _tests(nb):
    return [c for c in nb.cells if c.cell_type == "code" and is_grade(c) and not is_solution(c)]


@pytest.fixture
def autograde(course, tmp_path, monkeypatch):
    monkeypatch.setenv("JAXCOURSE_ROOT", str(course.root))
    monkeypatch.setenv("JAXCOURSE_CLASS", str(tmp_path))
    monkeypatch.setenv("PATH", tool_env()["PATH"])  # nbgrader's Gradebook runs alembic by name
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:  # formgrader autogrades released work only
        gb.add_assignment(ASSIGNMENT)

    def run(report_of):
        stop = _answering(tmp_path, report_of)
        try:
            nb, _ = GradedByTheService().preprocess(
                source_notebook(ASSIGNMENT), {"nbgrader": {"assignment": ASSIGNMENT, "student": "ada"}}
            )
        finally:
            stop.set()
        return {c.metadata.nbgrader["grade_id"]: determine_grade(c)[0] for c in _tests(nb)}, nb

    return run


def test_each_grade_cell_gets_the_graders_points_and_no_more(autograde):
    tests = _tests(source_notebook(ASSIGNMENT))
    first, second = tests[0].metadata.nbgrader, tests[1].metadata.nbgrader

    def report_of(job):
        results = [
            records.TestResult(
                "a: values", first["grade_id"], 1.5, first["points"], "failed", "wrong on 8 devices", "visible"
            ),
            records.TestResult(
                "b: values", second["grade_id"], second["points"], second["points"], "passed", "", "visible"
            ),
        ]
        return Report(job["student"], job["assignment"], "graded", "", results)

    scores, nb = autograde(report_of)
    assert scores[first["grade_id"]] == 1.5 and scores[second["grade_id"]] == second["points"]
    others = {k: v for k, v in scores.items() if k not in (first["grade_id"], second["grade_id"])}
    assert others and set(others.values()) == {0}  # not scored by the report: nothing
    assert all(not c.outputs for c in nb.cells if c.cell_type == "code" and not is_grade(c))  # nothing ran


def test_no_autograde_step_but_the_recorder_writes_the_gradebook():
    """nbgrader's SaveAutoGrades (or a step built on it) would write every score again from the
    grade cells, past the recorder's latest-submission rule."""
    from nbgrader.preprocessors import SaveAutoGrades

    steps = [
        getattr(importlib.import_module(path.rpartition(".")[0]), path.rpartition(".")[2])
        for path in AUTOGRADE_PREPROCESSORS
    ]
    assert GradedByTheService in steps
    assert [s.__name__ for s in steps if issubclass(s, SaveAutoGrades)] == []


def test_a_report_that_failed_keeps_every_grade_cell_at_zero(autograde):
    scores, nb = autograde(lambda job: Report(job["student"], job["assignment"], "timeout", "did not finish", []))
    assert scores and set(scores.values()) == {0}
    assert all("did not finish" in c.outputs[0]["evalue"] for c in _tests(nb))


@pytest.mark.slow
def test_formgraders_autograde_gives_the_graders_points(course, tmp_path, monkeypatch):
    """nbgrader's own autograde (NbGraderAPI, as formgrader calls it) with the class's steps: the
    service's grader grades a wrong ring, and the gradebook gets its points, not the full marks
    nbgrader gives a notebook whose grade cells no step filled."""
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy, ignore=shutil.ignore_patterns(".jaxcourse", "submitted", "autograded"))
    root = copy / "assignments"
    wrong = wrong_submission(ASSIGNMENT, "ring_wrong_direction")
    write_submission(root / "submitted", "bob", solved_notebook(course, wrong.functions))
    grader = grader_for(ASSIGNMENT, course, timeout=60, test_timeout=8, sandbox=ProcessSandbox())

    def graded(job):
        notebook = tmp_path / "job" / f"{ASSIGNMENT}.ipynb"
        notebook.parent.mkdir(exist_ok=True)
        notebook.write_text(job["notebook"])
        return grader.grade(job["student"], notebook)

    monkeypatch.setenv("JAXCOURSE_ROOT", str(copy))
    monkeypatch.setenv("JAXCOURSE_CLASS", str(root))
    monkeypatch.chdir(root)
    config = Config()
    config.CourseDirectory.root, config.CourseDirectory.db_url = str(root), f"sqlite:///{root}/gradebook.db"
    config.Autograde.autograde_preprocessors = AUTOGRADE_PREPROCESSORS
    stop = _answering(root, graded)
    try:
        done = NbGraderAPI(CourseDirectory(config=config), config=config).autograde(ASSIGNMENT, "bob")
    finally:
        stop.set()
    assert done["success"], done.get("error", "")[-3000:]
    expected = total(ASSIGNMENT) - sum(full_marks(ASSIGNMENT)[t] - kept for t, kept in wrong.expected.items())
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        assert gb.find_submission(ASSIGNMENT, "bob").score == expected < total(ASSIGNMENT)
    kept = Report.from_json(json.loads((root / "graded" / ASSIGNMENT / "bob" / "results.json").read_text()))
    assert kept.score == expected  # recorded as every grade is: results.json is the truth

    # The gradebook's row is the recorder's alone, under its rules: once a later submission of
    # bob's is kept, grading this one again (full marks, say) changes nothing, though every grade
    # cell now holds its full points, which nbgrader's SaveAutoGrades would have written.
    (root / "submitted" / "bob" / ASSIGNMENT / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC\n")
    (root / "graded" / ASSIGNMENT / "bob" / "submission.txt").write_text("2026-11-29 11:00:00.000000 UTC\n")
    stop = _answering(root, lambda job: Report(job["student"], job["assignment"], "graded", "", kept_full(kept)))
    try:
        again = NbGraderAPI(CourseDirectory(config=config), config=config).autograde(ASSIGNMENT, "bob")
    finally:
        stop.set()
    assert again["success"], again.get("error", "")[-3000:]
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        assert gb.find_submission(ASSIGNMENT, "bob").score == expected


def kept_full(report):
    """``report``'s tests, each at its full points."""
    return [dataclasses.replace(t, score=t.max_score, status="passed", message="") for t in report.tests]
