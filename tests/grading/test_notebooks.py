"""A notebook from a student's hands is read whatever it holds: one that no grader can read gets a
one-line reason that says what to do (``NotebookError``), never another exception, and one that is
read has the shape the grader relies on."""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.core.errors import JaxcourseError
from autograder.grading.pipeline.grader import grader_for
from autograder.grading.submission import notebooks
from autograder.grading.submission.submissions import find_submissions

from ..helpers.course import ASSIGNMENT, NOTEBOOK, solved_notebook, source_notebook, write_submission
from ..helpers.fuzz import JSON, damaged
from ..helpers.malformed import KINDS

GOOD = source_notebook(ASSIGNMENT)
GOOD_JSON = json.loads(nbformat.writes(GOOD))
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_a_notebook_no_grader_can_read_gets_one_line_that_says_why(kind, tmp_path):
    path = tmp_path / NOTEBOOK
    kind.write(path, GOOD)
    with pytest.raises(notebooks.NotebookError) as caught:
        notebooks.read(path)
    message = str(caught.value)
    assert kind.reason in message and message.startswith(NOTEBOOK) and "\n" not in message


@pytest.mark.parametrize(
    "kind", [k for k in KINDS if k.name not in {"folder", "link", "huge_output"}], ids=lambda k: k.name
)
def test_the_exchange_refuses_what_no_grader_could_read_without_nbformat(kind, tmp_path):
    """The bytes-level kinds (the exchange caps sizes itself and never sees a link or a folder)."""
    path = tmp_path / NOTEBOOK
    kind.write(path, GOOD)
    if kind.name in {"unknown_version"}:  # not a version-4 notebook: left to the grader's nbformat
        notebooks.check_submitted(path.read_bytes(), NOTEBOOK)
        return
    with pytest.raises(notebooks.NotebookError) as caught:
        notebooks.check_submitted(path.read_bytes(), NOTEBOOK)
    assert kind.reason in str(caught.value)


def test_an_old_nbformat_is_read_as_version_4_with_its_grade_cells(tmp_path):
    path = tmp_path / NOTEBOOK
    nbformat.write(nbformat.convert(copy.deepcopy(GOOD), 3), path)  # convert changes what it is given
    nb = notebooks.read(path)
    assert nb.nbformat == 4 and notebooks.assignment_of(nb) == ASSIGNMENT
    assert notebooks.code_cells(nb, GOOD) == notebooks.code_cells(GOOD, GOOD)


def test_a_time_no_gradebook_can_take_leaves_the_submission_undated(tmp_path):
    stamps = {"ok": "2026-11-20 10:00:00.000000 UTC", "words": "last tuesday, late", "bytes": "\udcff"}
    for student, text in stamps.items():
        folder = tmp_path / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_bytes(text.encode("utf-8", "surrogateescape"))
    (tmp_path / "folder" / ASSIGNMENT / "timestamp.txt").mkdir(parents=True)
    found = {s.student: s.timestamp for s in find_submissions(tmp_path, ASSIGNMENT, NOTEBOOK)}
    assert found == {"ok": stamps["ok"], "words": None, "bytes": None, "folder": None}


def _read_or_refused(data: bytes) -> None:
    """``data`` reads as a notebook the grader can use without an exception (text wherever it
    runs code), or is refused with one line."""
    try:
        nb = notebooks.parse(data, NOTEBOOK)
    except notebooks.NotebookError as err:
        assert "\n" not in str(err)
        return
    assert notebooks.assignment_of(nb) is None or isinstance(notebooks.assignment_of(nb), str)
    for cells in (notebooks.code_cells(nb, GOOD), notebooks.code_cells(nb, None), notebooks.public_cells(nb)):
        assert all(isinstance(c["source"], str) for c in cells)


@FUZZ
@given(data=st.binary(max_size=2000) | JSON.map(lambda v: json.dumps(v).encode()))
def test_any_bytes_read_as_a_notebook_or_a_notebook_error(data):
    _read_or_refused(data)


@FUZZ
@given(document=damaged(GOOD_JSON))
def test_a_damaged_notebook_reads_as_a_notebook_or_a_notebook_error(document):
    _read_or_refused(json.dumps(document).encode())


def test_a_grader_made_without_a_sandbox_reports_on_unreadable_notebooks_and_runs_none(course, tmp_path):
    """The hub's grading service, formgrader and a queue's dispatcher identify submissions and
    report on those no grader can read; asked to grade one it could run, such a grader refuses
    before it computes or starts anything (it once ran it in an unisolated process)."""
    grader = grader_for(ASSIGNMENT, course, tmp_path / "cache")
    broken = tmp_path / "ann" / NOTEBOOK
    broken.parent.mkdir()
    broken.write_text("{not a notebook")
    report = grader.grade("ann", broken)
    assert report.status == "invalid" and report.fingerprint and sum(t.score for t in report.tests) == 0
    solved = write_submission(tmp_path, "bob", solved_notebook(course))
    with pytest.raises(JaxcourseError, match="made without a sandbox: it runs no notebook"):
        grader.grade("bob", solved)
    assert not (tmp_path / "cache").exists()  # no reference was computed, no compile cache filled
