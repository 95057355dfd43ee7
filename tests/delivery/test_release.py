"""nbgrader round trip: the release hides solutions and hidden tests; nbgrader's own Validate
passes on the solved source and fails on the release; nbgrader autograde scores the reference."""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from tempfile import TemporaryDirectory

import pytest

from autograder.delivery.release import leaked_files

from ..helpers.course import (
    ASSIGNMENTS,
    RELEASED,
    notebook_name,
    reference_sources,
    solved_notebook,
    source_notebook,
    total,
    write_submission,
)
from ..helpers.rules import grade_cells, unsolved_failures

pytestmark = pytest.mark.slow


def nbgrader(course, *args: str) -> subprocess.CompletedProcess:
    (done,) = nbgrader_at_once(course, args)
    return done


def nbgrader_at_once(course, *runs: tuple[str, ...]) -> list[subprocess.CompletedProcess]:
    """nbgrader's commands run side by side: each kernel mostly waits on one thread, so two take
    about the time of one on two cores. Each run's kernel listens on sockets of its own in a
    private folder: over TCP, two kernels started at once can be handed the same free port, and
    one dies before it answers (jupyter_client's port race; CI met it once)."""

    def run(number: int, args: tuple[str, ...]) -> subprocess.CompletedProcess:
        kernel = ["--KernelManager.transport=ipc", f"--KernelManager.ip={sockets}/run{number}"]
        return subprocess.run(
            [sys.executable, "-m", "nbgrader", *args, *kernel],
            cwd=course.nbgrader_root,
            capture_output=True,
            text=True,
            timeout=900,
        )

    with TemporaryDirectory(prefix="kernels-") as sockets, ThreadPoolExecutor(len(runs)) as pool:
        return list(pool.map(run, range(len(runs)), runs))


@pytest.mark.parametrize("assignment", RELEASED)
def test_release_holds_no_solutions_and_no_hidden_tests(course, assignment):
    release = course.nbgrader_root / "release" / assignment
    assert leaked_files(release) == []
    text = (release / notebook_name(assignment)).read_text()
    assert "hidden=True" not in text
    bodies = [src.split("\n", 1)[1] for src in reference_sources(assignment).values()]
    assert not [b for b in bodies if b.strip() and b in text]
    assert "raise NotImplementedError()" in text
    assert (release / "figures").is_dir()  # the pictures travel with the notebook


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_nbgrader_validate_passes_on_the_source_and_fails_on_the_release(course, assignment):
    """Every grade cell fails on a release nobody has worked on (counted from the source's grade
    cells: a new part's adds one, and no count is kept by hand)."""
    notebook = notebook_name(assignment)
    source, done = nbgrader_at_once(
        course,
        *[("validate", str(course.nbgrader_root / kind / assignment / notebook)) for kind in ("source", "release")],
    )
    assert source.returncode == 0 and "Success!" in source.stdout, source.stdout + source.stderr
    grades = grade_cells(source_notebook(assignment).cells)
    assert not (problem := unsolved_failures(assignment, grades, done.stdout)), problem


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_nbgrader_autograde_gives_the_reference_full_marks(course, assignment):
    from nbgrader.api import Gradebook

    submitted = course.nbgrader_root / "submitted"
    write_submission(submitted, "nbgrader-alice", solved_notebook(course, assignment=assignment), assignment)
    try:
        done = nbgrader(course, "autograde", assignment, "--student=nbgrader-alice", "--force")
        assert done.returncode == 0, done.stderr[-3000:]
        with Gradebook(f"sqlite:///{course.nbgrader_root / 'gradebook.db'}") as gb:
            assert gb.find_submission(assignment, "nbgrader-alice").score == total(assignment)
    finally:
        shutil.rmtree(submitted / "nbgrader-alice", ignore_errors=True)


def test_the_release_ships_the_visible_cases_records_and_nothing_else(course, tmp_path):
    """One source of truth: the shipped records are what today's references give, made afresh
    here with no cache; and they are the visible cases', on the unsalted seeds a student's check
    draws: no hidden case and no graded input has a record a student could read."""
    from autograder.grading.pipeline import expected
    from autograder.grading.pipeline.plan import plan
    from autograder.grading.pipeline.references import Provider, ensure, record_key
    from autograder.specs import ASSIGNMENTS, EXERCISES
    from autograder.trusted import reference as records

    for spec in (*ASSIGNMENTS.values(), *EXERCISES.values()):
        store = course.nbgrader_root / "expected" / expected.folder_name(spec)
        unsalted = Provider.solutions(course, spec, salted=False)
        visible = plan(spec.name, spec.tasks, "", unsalted.targets)
        assert {p.stem for p in store.iterdir()} == {record_key(t.sig, t.seed) for t in visible}, spec.name
        fresh = ensure(unsalted, visible, tmp_path / expected.folder_name(spec), 8, expected.TIMEOUT)
        for test in visible:
            (ours, our_arrays), (shipped, shipped_arrays) = (
                records.load(fresh[test.id]),
                records.load(store / record_key(test.sig, test.seed)),
            )
            assert ours == shipped, test.id
            assert our_arrays.keys() == shipped_arrays.keys() and all(
                (our_arrays[k] == shipped_arrays[k]).all() for k in our_arrays
            ), test.id
        tasks = tuple(t.with_hidden(unsalted.hidden_cases(t)) for t in spec.tasks)
        hidden = [t for t in plan(spec.name, tasks, "", unsalted.targets) if t.case.hidden]
        # A program at scale draws no input (it is compiled, never run): the grader's and the
        # student's are the same test, and its record holds the reference's cost, no value.
        graded = [t for t in plan(spec.name, tasks, course.salt(), unsalted.targets) if not t.projected]
        never = {record_key(t.sig, t.seed) for t in hidden + graded}
        assert not never & {p.stem for p in store.iterdir()}, spec.name
        for test in (t for t in visible if t.projected):
            shipped, arrays = records.load(store / record_key(test.sig, test.seed))
            assert set(shipped) == {"cost", "targets"} and not arrays, test.id


@pytest.mark.parametrize("assignment", RELEASED)
def test_a_release_imports_only_what_its_students_are_given(course, assignment):
    """A notebook may import what its assignment gives (``autograder.specs.given``), never a task
    spec: the spec is the grader's, and whatever a notebook imports a student may call."""
    import re

    text = (course.nbgrader_root / "release" / assignment / notebook_name(assignment)).read_text()
    imported = set(re.findall(r"autograder\.specs(?:\.\w+)*", text))
    assert imported <= {"autograder.specs.given"} | {m for m in imported if m.startswith("autograder.specs.given.")}
    assert not re.search(r"from autograder import specs|from autograder\.specs import (?!given)", text)
