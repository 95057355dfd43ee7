"""Assignment 03_multiprocess_training: the reference scores full marks in all three layouts,
each known-wrong submission loses exactly its points with its reason, a hang is reported by
process and step within its time limit; the step's checks and the sandbox's records on their own.

The fast tests call the training modules in this process; the slow ones grade whole notebooks
through ``Grader`` (sandbox, launcher, trusted worker), as ``jaxcourse grade`` does.
"""

from __future__ import annotations

import copy
import time
from concurrent.futures import Future, ThreadPoolExecutor

import jax
import nbformat
import numpy as np
import optax
import pytest
from jax.experimental import multihost_utils

from autograder.core.course import Course
from autograder.grading.student.self_check import judge
from autograder.harness import layouts as training
from autograder.specs import multiprocess_training as spec
from autograder.specs.given import multiprocess_training as given
from autograder.trusted.training import records

from ..helpers import snapshot
from ..helpers.course import REPO, full_marks, reference_sources, solved_source, total
from ..helpers.submissions import selected_wrong, wrong_submission, wrong_submissions

ASSIGNMENT = "03_multiprocess_training"
SPEC = spec.ASSIGNMENT


def namespace_of(replace: dict[str, str]) -> dict:
    """The graded functions as a notebook would define them, for the in-process tests."""
    namespace = {
        "jax": jax,
        "np": np,
        "optax": optax,
        "multihost_utils": multihost_utils,
        "loss_fn": given.loss_fn,
        "optimizer": given.optimizer,
        "data_mesh": given.data_mesh,
        "init_state": given.init_state,
        "local_batch": given.local_batch,
        "local_batch_count": given.local_batch_count,
    }
    for source in {**reference_sources(ASSIGNMENT), **replace}.values():
        exec(source, namespace)
    return namespace


# ---------------------------------------------------------------- fast: train_step in this process

STEP = SPEC.task("train_step")


def step_scores(fn) -> dict[str, tuple[float, str]]:
    """The step judged as a notebook's check judges it: exported, then measured on the trusted side."""
    return {r.name: (r.score, r.message) for r in judge(fn, task="train_step").tests}


def test_reference_step_scores_full_marks():
    scores = step_scores(namespace_of({})["train_step"])
    assert {name: s for name, (s, _) in scores.items()} == {f"train_step: {p}": v for p, v in STEP.points.items()}


@pytest.mark.parametrize(
    "name, reason",
    [
        ("same_dropout_key", "device 0 and devices 1, 2, 3, 4, 5, 6, 7 draw the same dropout mask"),
        ("psum_without_division", "moved 8 times as far as the reference's"),
        ("no_gradient_averaging", "differs from the reference's"),
        ("step_gathers_batch", "the program uses all-gather"),
    ],
)
def test_wrong_steps_lose_their_points_with_their_reason(name, reason):
    wrong = wrong_submission(ASSIGNMENT, name)
    scores = step_scores(namespace_of(wrong.functions)["train_step"])
    lost = {test: 0 for test in wrong.expected if test.startswith("train_step:")}
    assert {t: s for t, (s, _) in scores.items() if s == 0} == lost
    assert any(reason in message for _, message in scores.values()), scores


# ---------------------------------------------------------------- fast: what the sandbox sends


def test_records_from_the_sandbox_are_refused_unless_well_formed():
    good = {
        "status": "ok",
        "message": "",
        "processes": [
            {"batch": None, "params": {"w": training.encode([1.0, 2.0])}, "losses": training.encode([0.5]), "mesh": {}}
        ],
    }
    assert records.check_record(good, 1)["processes"][0]["params"]["w"].tolist() == [1.0, 2.0]
    for bad in (
        {**good, "status": "great"},
        {**good, "processes": good["processes"] * 2},
        {**good, "processes": [{**good["processes"][0], "losses": {"dtype": "object", "shape": [1], "data": [1]}}]},
        {**good, "processes": [{**good["processes"][0], "losses": {"dtype": "float32", "shape": [3], "data": [1]}}]},
        {
            **good,
            "processes": [{**good["processes"][0], "params": {"w": {"dtype": "float32", "shape": [1], "data": ["x"]}}}],
        },
        "a string",
    ):
        with pytest.raises(records.RecordError):
            records.check_record(bad, 1)


# ---------------------------------------------------------------- slow: whole notebooks, three layouts


@pytest.fixture(scope="module")
def grader(tmp_path_factory):
    from autograder.grading.pipeline.grader import grader_for
    from autograder.grading.sandbox.local import ProcessSandbox

    return grader_for(
        ASSIGNMENT,
        Course(REPO),
        cache=tmp_path_factory.mktemp("reference"),
        timeout=400,
        test_timeout=90,
        startup=60,
        sandbox=ProcessSandbox(),
    )


def grade(grader, tmp_path, name: str, replace: dict[str, str]):
    return timed(grader, name, submitted(tmp_path, name, replace))


def submitted(tmp_path, name: str, replace: dict[str, str]):
    path = tmp_path / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(solved_source(ASSIGNMENT, replace), path)
    return path


def timed(grader, name: str, path):
    start = time.monotonic()
    report = grader.grade(name, path)
    return report, time.monotonic() - start


FULL_MARKS = full_marks(ASSIGNMENT)


@pytest.mark.slow
def test_reference_scores_full_marks_in_all_three_layouts(grader, tmp_path):
    report, seconds = grade(grader, tmp_path, "reference", {})
    print(f"\ngrading one submission in three layouts took {seconds:.1f} s")
    snapshot.assert_matches(report, f"{ASSIGNMENT}/process/reference")
    assert report.status == "graded", report.message
    assert report.message == ""
    assert {t.name: t.message for t in report.tests if t.status != "passed"} == {}
    assert {t.name: t.score for t in report.tests} == FULL_MARKS
    assert report.score == report.max_score == total(ASSIGNMENT)
    hidden = {t.name for t in report.tests if t.visibility == "hidden"}
    assert hidden == {"make_global_batch: 4 processes x 2 devices", "train: 4 processes x 2 devices"}


@pytest.mark.slow
@pytest.mark.docker
def test_reference_scores_full_marks_in_the_docker_sandbox(grader, cpu_image, client, tmp_path):
    """Every process of a layout runs in the submission's one container, which has no network:
    the launcher's processes meet over its loopback."""
    from autograder.grading.sandbox import limits
    from autograder.grading.sandbox.docker_sandbox import DockerSandbox

    in_docker = copy.copy(grader)
    in_docker.sandbox = DockerSandbox(cpu_image, limits.load(REPO, ASSIGNMENT), client)
    report, seconds = grade(in_docker, tmp_path, "reference", {})
    print(f"\ngrading one submission in three layouts in a container took {seconds:.1f} s")
    assert report.status == "graded", report.message
    assert {t.name: t.message for t in report.tests if t.status != "passed"} == {}
    assert report.score == report.max_score == total(ASSIGNMENT)


@pytest.fixture(scope="module")
def graded_wrong(request, grader, tmp_path_factory) -> dict[str, Future]:
    """The session's wrong submissions graded two at a time, as ``jaxcourse grade --jobs 2``
    does: a layout's processes mostly wait on one another, and a hanging group waits out its
    limit, so a pair takes little longer than one. Each test reads its own (a grader's error
    stays with its submission). The notebooks are written first, in this thread: CPython 3.11's
    ``ast.parse`` (``solved_source``) raised SystemError once in a grading thread, cause unknown."""
    selected = {p["wrong"].name for p in selected_wrong(request)}
    tmp = tmp_path_factory.mktemp("wrong")
    with ThreadPoolExecutor(2) as pool:
        return {
            w.name: pool.submit(timed, grader, w.name, submitted(tmp, w.name, w.functions))
            for w in wrong_submissions(ASSIGNMENT)
            if w.name in selected
        }


@pytest.mark.slow
@pytest.mark.parametrize("wrong", wrong_submissions(ASSIGNMENT), ids=lambda w: w.name)
def test_wrong_submission_loses_exactly_its_points(wrong, graded_wrong):
    report, seconds = graded_wrong[wrong.name].result()
    snapshot.assert_matches(report, f"{ASSIGNMENT}/process/{wrong.name}")
    assert report.status == "graded", report.message
    assert report.message == ""
    assert {t.name: t.score for t in report.tests} == {**FULL_MARKS, **wrong.expected}
    for test in report.tests:
        if test.name in wrong.expected:  # each lost test says why, in the words its file gives
            assert test.status == "failed" and wrong.reasons[test.name] in test.message, (test.name, test.message)
        else:
            assert test.status == "passed", (test.name, test.message)
    if wrong.hang:
        messages = {t.name: t.message for t in report.tests}
        message = messages["train: 2 processes x 4 devices"]
        assert "the group hung" in message and wrong.hang in message, message
        # two hanging layouts, each stopped at its own limit, plus the ordinary work
        assert seconds < 2 * spec.LAYOUT_TIMEOUT + 120, seconds
