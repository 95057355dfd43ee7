"""Scoring hand-made measurements as the grader scores real ones: each case's closed-form targets
beside its measurement, as its reference record holds them (from the instructor's ``TARGETS``)."""

from __future__ import annotations

from typing import Any

from autograder.core.course import Course
from autograder.core.records import TestResult
from autograder.core.tasks import Task
from autograder.specs import find
from autograder.trusted.judges import score_task

from .course import REPO


def scores(assignment: str, task: Task, measured: list[tuple[Any, dict[str, Any]]]) -> dict[str, tuple[float, str]]:
    """Part -> (score, message) of ``task`` on ``measured``, each case with its targets."""
    return {r.name.split(": ")[1]: (r.score, r.message) for r in results(assignment, task, measured)}


def results(assignment: str, task: Task, measured: list[tuple[Any, dict[str, Any]]]) -> list[TestResult]:
    """``task``'s test results on ``measured``, each case with its targets."""
    targets = Course(REPO).targets(find(assignment), task.name)
    return score_task(task, [(case, {**m, "targets": targets.on(case)}) for case, m in measured])
