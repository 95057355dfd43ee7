"""No answer in a student's hands: a student who writes nothing of their own and, in every graded
function, calls whatever reference the installed package offers (found by name, in a task's
record, or as a closed form; ``finds_answers.py``) scores nothing, in every assignment, through
the docker sandbox as the class is graded. The same search, run where the references are (the
instructor's checkout), finds every one of them first: the attack would score if they were there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.grading.pipeline.grader import grader_for
from autograder.grading.sandbox import limits
from autograder.grading.sandbox.docker_sandbox import DockerSandbox
from autograder.specs import get

from ..helpers.course import RELEASED, REPO, reference_sources, solved_notebook, write_submission

FINDER = (Path(__file__).parent / "finds_answers.py").read_text()


def attack(course, assignment: str):
    """The released notebook with every solution cell handing its call to ``answer``."""
    delegates = {
        name: f"def {name}(*args, **kwargs):\n    return answer({name!r}, *args, **kwargs)\n"
        for name in reference_sources(assignment)
    }
    return solved_notebook(course, delegates, FINDER, assignment)


def test_the_search_finds_every_reference_where_the_references_are():
    namespace: dict = {"__name__": "finds_answers"}
    exec(FINDER, namespace)
    for assignment in RELEASED:
        for task in get(assignment).tasks:
            first = namespace["candidates"](task.name)[0]
            assert (first.__module__, first.__name__) == (f"solutions.{get(assignment).solutions}", task.name)


@pytest.mark.slow
@pytest.mark.docker
def test_a_student_who_calls_the_packages_references_scores_nothing(course, cpu_image, client, tmp_path):
    scores, failures = {}, {}
    for assignment in RELEASED:
        box = DockerSandbox(cpu_image, limits.load(REPO, assignment), client)
        grader = grader_for(assignment, course, sandbox=box, test_timeout=30)
        report = grader.grade("finder", write_submission(tmp_path, "finder", attack(course, assignment), assignment))
        scores[assignment] = report.score
        failures[assignment] = {t.message for t in report.tests if t.score == 0}
    assert scores == dict.fromkeys(RELEASED, 0.0), failures
    assert all("no reference for" in " ".join(messages) for messages in failures.values()), failures
