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


def _entries(*ids: str) -> list:
    return [{"id": i, "sig": {"function": "f"}, "seed": 0, "reference": "r", "tolerance": [0.0, 0.0]} for i in ids]


def test_a_program_being_measured_is_waited_for_not_measured_twice(tmp_path):
    """Two submissions at once with a program in common: the first claims it, the second measures
    what it alone has, then waits for the first's record instead of compiling it again."""
    import threading

    from autograder.grading.pipeline.measured import MeasuredPrograms

    measured, meshes = MeasuredPrograms(tmp_path), {"8": [8]}
    first = measured.claim(_entries("shared", "first's own"), meshes)
    second = measured.claim(_entries("shared", "second's own"), meshes)
    assert [e["id"] for e in first.mine] == ["shared", "first's own"] and first.theirs == []
    assert [e["id"] for e in second.mine] == ["second's own"]
    assert [e["id"] for e in second.theirs] == ["shared"]

    waited = []
    waiter = threading.Thread(target=lambda: waited.append(measured.awaited(second.theirs, meshes, 30)))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive(), "the second did not wait for the first's measurement"
    record = {"values": {"ok": True}}
    measured.remember(first.mine, meshes, {"shared": record, "first's own": record})
    measured.release(first.mine, meshes)
    waiter.join(30)
    assert waited == [{"shared": record}]


def test_a_claim_given_up_unmeasured_is_left_to_the_waiter(tmp_path):
    """A claimer whose program hung or crashed its worker remembers nothing: its waiter measures
    the program itself (and claims it from then on: a third submission waits for it)."""
    from autograder.grading.pipeline.measured import MeasuredPrograms

    measured, meshes = MeasuredPrograms(tmp_path), {"8": [8]}
    first = measured.claim(_entries("hangs"), meshes)
    second = measured.claim(_entries("hangs"), meshes)
    measured.release(first.mine, meshes)
    assert measured.awaited(second.theirs, meshes, 30) == {}
    again = measured.claim(second.theirs, meshes)
    assert [e["id"] for e in again.mine] == ["hangs"]
    assert [e["id"] for e in measured.claim(_entries("hangs"), meshes).theirs] == ["hangs"]


def test_two_submissions_graded_at_once_compile_their_common_programs_once(grader, course, tmp_path):
    """Both reach the measurement together (a barrier holds the first until the second comes):
    one compiles each program, the other waits for its records, and both reports are the same."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from autograder.grading.pipeline.measured import MeasuredPrograms

    fresh = grader_for(ASSIGNMENT, course, cache=grader.cache, timeout=60, test_timeout=8, sandbox=ProcessSandbox())
    fresh.measured = MeasuredPrograms(tmp_path / "measured")  # the references kept, no program measured yet
    together, looked, reused = threading.Barrier(2, timeout=120), set(), fresh.measured.reused

    def reused_together(entries, meshes):
        if threading.get_ident() not in looked:  # each submission's first look, not its wait's
            looked.add(threading.get_ident())
            together.wait()
        return reused(entries, meshes)

    fresh.measured.reused = reused_together
    notebooks = {s: write_submission(tmp_path, s, solved_notebook(course)) for s in ("left", "right")}
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda s: fresh.grade(s, notebooks[s]), notebooks))
    arrays = [p for p in fresh.tests if p.task.kind != "python"]
    assert sum(r.profile.counts.get("programs compiled", 0) for r in reports) == len(arrays)
    assert sum(r.profile.counts["measurements reused"] for r in reports) == len(fresh.tests)
    assert [t.to_json() for t in reports[0].tests] == [t.to_json() for t in reports[1].tests]
    assert reports[0].score == reports[0].max_score
