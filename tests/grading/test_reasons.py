"""Every reason the grader gives for lost points has a kind a class report can count."""

from __future__ import annotations

import json

import pytest

from autograder.grading.reports.reasons import anonymised, kind_of

from ..helpers.course import REPO

SNAPSHOT = json.loads((REPO / "tests" / "snapshots" / "grading.json").read_text())
FAILED = sorted(
    {
        message
        for key, record in SNAPSHOT.items()
        if not key.startswith("_")
        for _, _, status, message in record.get("tests", [])
        if status != "passed"
    }
)


def test_every_failure_the_grader_writes_has_a_kind():
    """The snapshot holds every wrong submission's and every attack's report: none of their
    reasons may fall to "other" (a reworded verdict needs its rule here)."""
    unknown = [m for m in FAILED if kind_of(m) == "other"]
    assert len(FAILED) > 100 and not unknown, unknown


@pytest.mark.parametrize(
    "message, kind",
    [
        (
            "mesh 8:i, axis 'i', float32, (2, 3) per device: the compiled HLO contains all-gather (all_gather); "
            "ring_all_gather may use only ppermute",
            "forbidden collective: all_gather",
        ),
        (
            "mesh 2x4:data,model, float32, (8, 8) per device: the compiled HLO runs all-gather (all_gather) over "
            "'model'; step may run over 'data' only psum",
            "collective on the wrong axis: all_gather",
        ),
        (
            "mesh 8:i, axis 'i', float32, (8, 5) per device: sends 1.50x the reference's bytes per device over 'i' "
            "(420 against 280 on the same mesh; at most 1x)",
            "sends too much",
        ),
        (
            "mesh 8:i, axis 'i', float32, (8, 5) per device: sends to devices that are not its neighbours: a ppermute "
            "pair is 4 hops apart",
            "not a ring",
        ),
        (
            "mesh 4:i, axis 'i', float32, (1, 8, 8) (4, 2, 8) per device: runs 2.29x the reference's FLOPs per device "
            "(4,096 against 1,792 on the same mesh; at most 1.5x)",
            "computes too much",
        ),
        (
            "mesh 8:i, axis 'i', float32, (32, 8) (32, 8) (32, 8) per device, causal=True: needs 1.97x the reference's "
            "memory per device at its peak",
            "memory at peak",
        ),
        (
            "mesh 8:i, axis 'i', float32, (4, 8) (4, 8) (4, 8) per device, causal=True: wrong values on 6 of 8 devices",
            "wrong values",
        ),
        (
            "the program uses all-gather; averaging gradients needs only an all-reduce",
            "forbidden collective: all_gather",
        ),
        (
            "a hidden case: it sends more than 1.5x the reference's bytes over 'i': a ring passes each block on; your "
            "visible cases pass, so look at what changes with the sizes",
            "sends too much",
        ),
        (
            "a hidden case: it needs more than 1.5x the reference's memory per device at its peak: ring attention "
            "holds one block",
            "memory at peak",
        ),
        (
            "a hidden case: it runs more than 1.5x the reference's FLOPs per device: each device runs its own stage",
            "computes too much",
        ),
        ("not checked until the technique holds (see the technique part)", None),
        ("mesh 8:i, axis 'i', float32, (2, 3) per device: not checked until the values are right", None),
    ],
)
def test_a_reason_is_counted_by_what_it_says(message, kind):
    assert kind_of(message) == kind


def test_an_example_names_no_student():
    said = "code cell 3 raised RuntimeError at line 1: student017 was here"
    assert anonymised(said, "student017") == "code cell 3 raised RuntimeError at line 1: <student> was here"
