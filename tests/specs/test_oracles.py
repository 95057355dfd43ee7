"""The references agree with independent stand-ins written another way (``tests/oracles/``: on
JAX's own collectives or sharding, or measured from the compiled program): every visible case's
values, as a student's check judges them against the records made from the references. The
stand-ins are test code only: no student's copy of the course holds either."""

from __future__ import annotations

import importlib

import pytest

from autograder.grading.student.self_check import judge
from autograder.specs import ASSIGNMENTS, EXERCISES

from ..helpers.course import REPO
from ..helpers.rules import oracle_problems

MODULES = sorted(p.stem for p in (REPO / "tests" / "oracles").glob("*.py") if p.stem != "__init__")
ORACLES = {module: importlib.import_module(f"tests.oracles.{module}").ORACLES for module in MODULES}
STAND_INS = [(module, task, fn) for module, oracles in ORACLES.items() for task, fn in oracles.items()]
# 03's parts are judged on runs of launched processes, not by a stand-in's check (tests/trusted/test_training.py).
SPECS = [s for s in (*ASSIGNMENTS.values(), *EXERCISES.values()) if s.solutions != "multiprocess_training"]


def test_every_assignment_and_lecture_but_the_multiprocess_one_has_stand_ins():
    problems = [p for spec in SPECS for p in oracle_problems(spec, ORACLES.get(spec.solutions))]
    stray = sorted(set(MODULES) - {s.solutions for s in SPECS})
    problems += [f"tests/oracles/{m}.py stands in for no assignment or lecture: rename or remove it" for m in stray]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("module, task, fn", STAND_INS, ids=[f"{m}/{t}" for m, t, _ in STAND_INS])
def test_the_reference_agrees_with_its_stand_in(module, task, fn):
    values = {r.name: r for r in judge(fn, task=task).tests}[f"{task}: values"]
    assert values.status == "passed", values.message
