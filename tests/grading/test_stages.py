"""The grading of one submission is a declared chain (``grading/pipeline/stages.py``): each stage's
record is the next one's input, from the submitted notebook to its ``Report``."""

from __future__ import annotations

import inspect
from typing import get_type_hints

from autograder.grading.pipeline.handoff import Submitted
from autograder.grading.pipeline.stages import STAGES
from autograder.grading.submission.report import Report


def test_each_stage_takes_what_the_last_one_gives():
    given = Submitted
    for stage in STAGES:
        hints = get_type_hints(stage.run)
        takes = list(inspect.signature(stage.run).parameters)[1]
        assert hints[takes] is given, f"{stage.name} takes {hints[takes]}, is given {given}"
        given = hints["return"]
    assert given is Report


def test_the_stages_are_those_docs_grading_lists():
    names = [s.name for s in STAGES]
    assert names == ["read", "plan", "sandbox and seal", "read results", "measure", "score"]
    assert {status for s in STAGES for status in s.stops} == {"invalid", "timeout", "crashed", "error"}
