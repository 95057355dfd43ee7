"""The contract between the grader and the sandbox: the plan the runner is handed and the results
it hands back. Both sides import these names, so they cannot drift apart; the trusted reader
(``trusted/results.py``) checks every field before anything reads it.

A grading runs in two phases. The plan holds the visible cases only: the runner runs the cells,
exports the visible cases and writes its results (``RESULTS``, ``ARTIFACTS``). The grader seals a
copy of them, and only then writes the hidden cases (``HIDDEN_PLAN``) into the job folder; the
runner exports those into ``HIDDEN_RESULTS`` and ``HIDDEN_ARTIFACTS``. Whatever the sandbox may
say that reaches a student (its notebook's error, a visible case's message) was sealed before it
could know a hidden case.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from .records import Signature

RESULTS = "results.json"
ARTIFACTS = "artifacts.npz"
CELLS = "cells.json"
PLAN = "plan.json"
HIDDEN_PLAN = "hidden.json"  # {"tests": [PlannedCall, ...]}, written by the grader after the seal
HIDDEN_RESULTS = "hidden-results.json"
HIDDEN_ARTIFACTS = "hidden-artifacts.npz"
MAX_MESSAGE = 600  # characters of the sandbox's own words the grader keeps for one message
MAX_RESULTS_BYTES = 2 << 20
MAX_ARTIFACTS_BYTES = 64 << 20
VERSION = 1

TestStatus = Literal["exported", "value", "missing", "error", "timeout"]
TEST_STATUSES: frozenset[str] = frozenset({"exported", "value", "missing", "error", "timeout"})


class Cell(TypedDict):
    grade_id: str | None
    source: str


class PlannedCall(TypedDict):
    """One call the runner makes: which function, on which signature, within how long."""

    id: str
    sig: Signature
    index: int
    timeout: float


class Plan(TypedDict):
    num_devices: int
    tests: list[PlannedCall]  # the visible cases
    keep_going: NotRequired[bool]  # run every cell whatever raises (warming the compile cache)
    hidden_wait: NotRequired[float]  # seconds to wait for HIDDEN_PLAN once the visible cases are out


class NotebookRun(TypedDict):
    status: Literal["ok", "error"]
    message: str


class CallResult(TypedDict, total=False):
    """What one call gave: an artifact's name, a plain value, or why there is neither."""

    status: TestStatus
    message: str
    artifact: str  # "000": a member of artifacts.npz; the reader replaces it with a host path
    result: dict[str, Any]  # plain-value kinds: {"value": ...} or {"raises": ..., "message": ...}
    varying: list[str]  # axes an output varies along where the task asks for one value


class RunnerProfile(TypedDict):
    """The runner's own timings (core/profile.py): shown in a profile, never scored on."""

    entered_at: float  # wall clock (time.time()) when the runner's main began
    seconds: dict[str, float]  # phase -> seconds


MAX_PROFILE_PHASES = 64


class Results(TypedDict):
    version: int
    notebook: NotebookRun
    meshes: dict[str, Any]  # mesh string -> mesh signature (core.mesh.signature)
    tests: dict[str, CallResult]
    profile: NotRequired[RunnerProfile]
