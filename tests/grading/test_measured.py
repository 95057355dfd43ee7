"""A class hands in many copies of the same programs, and a class shares its notebook's public
cells: each program is measured once (its record kept, the program not), and the public cells
fill the sandbox's compile cache once.
Reusing must never change a report (tests/grading/test_determinism.py holds whole classes to that)."""

from __future__ import annotations

import pytest

from autograder.grading.pipeline.grader import grader_for
from autograder.grading.sandbox.local import ProcessSandbox

from ..helpers.course import ASSIGNMENT, full_marks, solved_notebook, write_submission
from ..helpers.submissions import wrong_submission

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def grader(course, tmp_path_factory):
    return grader_for(
        ASSIGNMENT, course, cache=tmp_path_factory.mktemp("cache"), timeout=60, test_timeout=8, sandbox=ProcessSandbox()
    )


def _grade(grader, tmp_path, student, nb):
    return grader.grade(student, write_submission(tmp_path, student, nb))


def _in_own_words(nb):
    """The same functions, written on other lines: a comment and blank lines atop each."""
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            cell.source = "# my own work, started on a Tuesday\n\n\n" + cell.source
    return nb


def test_the_same_computation_is_measured_once_however_it_is_written(grader, course, tmp_path):
    """The artifact carries no file names or line numbers, so a student whose functions sit on
    other lines hands in the same programs."""
    first = _grade(grader, tmp_path, "first", solved_notebook(course))
    again = _grade(grader, tmp_path, "again", _in_own_words(solved_notebook(course)))
    assert first.profile.counts["measurements reused"] == 0
    assert again.profile.counts["measurements reused"] == len(grader.tests)
    # Kept is each program's record, never the program: the first student's were compiled and
    # none was written (only the sandbox's cache, of the public cells, holds compiled programs).
    # Nothing else was compiled: neither a probe of the compiler's options nor a key's programs.
    arrays = [p for p in grader.tests if p.task.kind != "python"]
    assert first.profile.counts["programs compiled"] == len(arrays)
    assert [p for p in grader.cache.rglob("*-cache") if "sandbox-xla" not in p.parts] == []
    assert "trusted: worker start-up" not in again.profile.seconds  # no worker was started at all
    assert [t.to_json() for t in again.tests] == [t.to_json() for t in first.tests]


def test_only_the_changed_function_is_measured_again(grader, course, tmp_path):
    """fold_wrong_axis changes fold_rng_over_axis, which no other graded function calls, by
    folding over axis 'i' whatever it is given: on a case whose axis is 'i' that is the very
    program the reference hands in, and it is reused too."""
    wrong = wrong_submission(ASSIGNMENT, "fold_wrong_axis")
    _grade(grader, tmp_path, "right", solved_notebook(course))
    report = _grade(grader, tmp_path, "wrong", solved_notebook(course, wrong.functions, wrong.extra_cell))
    changed = [p for p in grader.tests if p.task.name == "fold_rng_over_axis" and p.case.axis != "i"]
    assert changed and len(changed) < len([p for p in grader.tests if p.task.name == "fold_rng_over_axis"])
    assert report.profile.counts["measurements reused"] == len(grader.tests) - len(changed)
    assert {t.name: t.score for t in report.tests} == {**full_marks(ASSIGNMENT), **wrong.expected}


def test_the_public_cells_fill_the_sandbox_compile_cache_once(grader, course, tmp_path):
    cache = grader.sandbox_cache
    assert cache is not None and not cache.writable
    programs = {p.name for p in cache.path.iterdir() if p.name.endswith("-cache")}
    assert programs, "the notebook's demonstrations compile programs; none were kept"
    stamp = (cache.path / "filled-from").stat().st_mtime_ns
    again = grader_for(ASSIGNMENT, course, cache=cache.path.parent, sandbox=ProcessSandbox())
    assert again.sandbox_cache == cache and (cache.path / "filled-from").stat().st_mtime_ns == stamp


def test_measurements_outlive_the_grader(grader, course, tmp_path):
    """A student checking a notebook again, or a class graded again after a fix: a new grader on
    the same cache finds what the last one measured."""
    _grade(grader, tmp_path, "once", solved_notebook(course))
    later = grader_for(ASSIGNMENT, course, cache=grader.cache, timeout=60, test_timeout=8, sandbox=ProcessSandbox())
    report = _grade(later, tmp_path, "twice", solved_notebook(course))
    assert report.profile.counts["measurements reused"] == len(later.tests)
