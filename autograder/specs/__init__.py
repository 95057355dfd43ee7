"""The course's assignments, by nbgrader name, and the lectures' self-check exercises.

What a student may see of each: tasks, visible cases, points and rules; never a reference, a
closed form that answers an exercise or a hidden case (those live in the instructor's
``solutions/``). A lecture's exercises live in ``lecture_<nn>_<topic>.py`` beside this file as an
``EXERCISES`` ``Assignment`` (never graded); they are found by name, so adding a lecture needs no
edit here.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..core.errors import JaxcourseError
from ..core.tasks import Assignment
from . import (
    collectives,
    fsdp_tensor_parallel,
    inference,
    multiprocess_training,
    pipeline_experts,
    sharded_matmul,
    transformer_parallel,
)

ASSIGNMENTS: dict[str, Assignment] = {
    a.name: a
    for a in (
        collectives.ASSIGNMENT,
        sharded_matmul.ASSIGNMENT,
        multiprocess_training.ASSIGNMENT,
        fsdp_tensor_parallel.ASSIGNMENT,
        transformer_parallel.ASSIGNMENT,
        pipeline_experts.ASSIGNMENT,
        inference.ASSIGNMENT,
    )
}


def _lecture_exercises() -> dict[str, Assignment]:
    found = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("lecture_")):
        exercises = importlib.import_module(f"{__name__}.{module}").EXERCISES
        found[exercises.name] = exercises
    return found


EXERCISES: dict[str, Assignment] = _lecture_exercises()


class UnknownAssignment(JaxcourseError, KeyError):
    def __str__(self) -> str:
        return f"unknown assignment {self.args[0]!r}; known: {', '.join(sorted(ASSIGNMENTS))}"


def get(name: str) -> Assignment:
    try:
        return ASSIGNMENTS[name]
    except KeyError:
        raise UnknownAssignment(name) from None


def find(name: str) -> Assignment:
    """An assignment or a lecture's exercises, by name."""
    return EXERCISES[name] if name in EXERCISES else get(name)
