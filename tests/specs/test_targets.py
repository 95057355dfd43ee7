"""The closed forms (``TARGETS``) say the least each part can send, and the reference sends exactly
that on every case, visible and hidden: a part's communication is held to the reference's bytes,
so these closed forms are what keeps the reference honest (and what a student's feedback shows as
the least). Each reference is compiled and measured here as the trusted side measures it."""

from __future__ import annotations

import math

import pytest

from autograder.core.course import Course
from autograder.harness import shard_map, sharded_step
from autograder.harness.calls import signature
from autograder.specs import ASSIGNMENTS, EXERCISES
from autograder.trusted.inputs import make_inputs
from autograder.trusted.measure import execute

from ..helpers.course import REPO
from ..helpers.rules import GUIDE

pytestmark = pytest.mark.slow

COURSE = Course(REPO)
KINDS = ("shard_map", "sharded_step")
# The array parts have closed forms; 03's solutions start JAX when imported, so they are not read.
SPECS = [s for s in (*ASSIGNMENTS.values(), *EXERCISES.values()) if any(t.kind in KINDS for t in s.tasks)]
CASES = [
    (spec, task, case)
    for spec in SPECS
    for task in spec.tasks
    if COURSE.targets(spec, task.name).comm_bytes is not None
    for case in task.with_hidden(COURSE.hidden_cases(spec, task.name)).cases
]


def test_every_part_held_to_a_least_has_its_closed_form():
    named = {(spec.name, task.name) for spec, task, _ in CASES}
    for spec in SPECS:
        for task in spec.tasks:
            if "communication" in task.points and task.kind in KINDS:
                assert (spec.name, task.name) in named, (
                    f"{spec.name}/{task.name} has no closed form of its least: add its entry to TARGETS in "
                    f"solutions/{spec.solutions}.py, Targets(comm_bytes=...) ({GUIDE})"
                )


@pytest.mark.parametrize("spec, task, case", CASES, ids=[f"{s.name}/{t.name}/{c.label()}" for s, t, c in CASES])
def test_the_reference_sends_exactly_its_closed_form(spec, task, case):
    sig = signature(task, case, spec.name)
    fn = getattr(COURSE.solutions(spec), task.name)
    build = shard_map.build if task.kind == "shard_map" else sharded_step.build
    wrapped, _, mesh = build(fn, sig)
    _, structure = execute(wrapped, make_inputs(sig, 0, mesh), mesh)
    least = COURSE.targets(spec, task.name).on(case)["comm_bytes"]
    sent = structure["census"]["program_bytes"]
    assert sent is not None and math.isclose(sent, least, rel_tol=1e-9), (
        f"the reference sends {sent} bytes per device, its closed form in TARGETS {least}: one of them is wrong"
    )
    assert math.isclose(sum((structure["signature"]["traffic"] or {}).values()), least, rel_tol=1e-9)
