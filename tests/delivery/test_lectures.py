"""Every lecture runs top to bottom with no error and no deprecation warning; every lecture
exercise has an answer that passes its self-check."""

from __future__ import annotations

import importlib

import pytest

from autograder.checks import check
from autograder.delivery.lectures import execute
from autograder.specs import ASSIGNMENTS, EXERCISES

from ..helpers.cluster import installed as cluster_installed
from ..helpers.course import REPO
from ..helpers.engine import IN_CI

LECTURES = sorted((REPO / "course").glob("*.ipynb"))
EXERCISE_TASKS = [(a, t) for a in EXERCISES.values() for t in a.tasks]


def test_there_are_eleven_lectures_each_with_exercises():
    assert len(LECTURES) == 11
    assert {a.notebook for a in EXERCISES.values()} == {p.name for p in LECTURES}


@pytest.mark.slow
@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_lecture_executes_without_errors_or_deprecations(path, request):
    if path.stem == "07_multi_process" and (IN_CI or cluster_installed()):
        request.getfixturevalue("slurm_cluster")  # lecture 07 runs its examples through srun where it can
    nb, _ = execute(path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors


def test_lectures_are_stored_without_outputs():
    import nbformat

    for path in LECTURES:
        nb = nbformat.read(path, as_version=4)
        assert all(
            not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code"
        ), path


@pytest.mark.parametrize("exercise", EXERCISE_TASKS, ids=lambda e: e[1].name)
def test_exercise_answer_passes_its_check(exercise):
    assignment, task = exercise
    module = importlib.import_module(f"solutions.lecture_{assignment.notebook.removesuffix('.ipynb')}")
    result = check(getattr(module, task.name))
    assert result.passed and result.score == task.max_score, result


def test_an_untouched_exercise_stub_is_reported_not_failed():
    _, task = EXERCISE_TASKS[0]

    def stub(*args, **kwargs):
        raise NotImplementedError()

    stub.__name__ = task.name
    result = check(stub)
    assert not result.attempted and not result.passed and result.tests == []
    assert "not attempted yet" in repr(result)


def test_function_names_are_unique_across_the_course():
    names = [t.name for a in (*ASSIGNMENTS.values(), *EXERCISES.values()) for t in a.tasks]
    assert len(names) == len(set(names))


def test_every_notebook_starts_jax_on_the_course_s_devices_in_its_setup_cell():
    """``use_devices(8)``, not ``use_cpu_devices``: on a host with one GPU, a notebook that asked
    for CPU devices beside it would still build its meshes over ``jax.devices()``, the one GPU."""
    import nbformat

    for path in [*LECTURES, *sorted((REPO / "assignments" / "source").glob("*/*.ipynb"))]:
        cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        assert "from autograder.mesh import use_devices\n\nuse_devices(8)" in cells[0], path.name
        assert not any("use_cpu_devices" in source for source in cells), path.name
