"""The references agree with independent stand-ins written another way (``tests/oracles/``: on
JAX's own collectives or sharding, or measured from the compiled program): every visible case's
values, as a student's check judges them against the records made from the references. The
stand-ins are test code only: no student's copy of the course holds either."""

from __future__ import annotations

import importlib

import pytest

from autograder.grading.self_check import judge
from autograder.specs import ASSIGNMENTS, EXERCISES

from ..helpers.course import REPO

MODULES = sorted(p.stem for p in (REPO / "tests" / "oracles").glob("*.py") if p.stem != "__init__")
STAND_INS = [
    (module, task, fn)
    for module in MODULES
    for task, fn in importlib.import_module(f"tests.oracles.{module}").ORACLES.items()
]


def test_every_assignment_and_lecture_but_the_multiprocess_one_has_stand_ins():
    covered = {a.solutions for a in (*ASSIGNMENTS.values(), *EXERCISES.values())} - {"multiprocess_training"}
    assert set(MODULES) == covered
    for module in MODULES:
        spec = next(a for a in (*ASSIGNMENTS.values(), *EXERCISES.values()) if a.solutions == module)
        assert {t for m, t, _ in STAND_INS if m == module} == {t.name for t in spec.tasks}, module


@pytest.mark.parametrize("module, task, fn", STAND_INS, ids=[f"{m}/{t}" for m, t, _ in STAND_INS])
def test_the_reference_agrees_with_its_stand_in(module, task, fn):
    values = {r.name: r for r in judge(fn, task=task).tests}[f"{task}: values"]
    assert values.status == "passed", values.message
