"""Plain-data records that cross module and process boundaries: call signatures (what the
sandbox is told; never values), measurements (what the trusted side found) and test results
(what a student is told). JSON-shaped, so they travel as they are between processes."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, TypedDict, final

from .pspec import SpecJSON


class InputSig(TypedDict):
    shape: list[int]  # global shape
    dtype: str
    spec: SpecJSON
    draw: str  # how the trusted side draws its values (tasks.Generator)


@final  # no other keys: a check for a key tells the kinds apart
class ShardMapSig(TypedDict):
    kind: Literal["shard_map"]
    function: str
    mesh: str
    axis: str | None
    inputs: list[InputSig]
    out_spec: SpecJSON | None  # None: per-device results, stacked over every axis
    kwargs: dict[str, Any]
    differentiate: bool  # export the gradient w.r.t. the first input, not the output


@final  # no other keys: a check for a key tells the kinds apart
class PythonSig(TypedDict):
    kind: Literal["python"]
    function: str
    args: list[Any]


@final  # no other keys: a check for a key tells the kinds apart
class LayoutSig(TypedDict):
    """One multi-process run of a training assignment's functions."""

    kind: Literal["training"]
    function: str
    assignment: str
    processes: int
    devices: int
    num_steps: int
    seed: int
    held: list[int]  # batches each process's data holds, by rank (each process is told its own)
    timeout: float


@final  # no other keys: a check for a key tells the kinds apart
class StepSig(TypedDict):
    """A training step, exported for one mesh."""

    kind: Literal["train_step"]
    function: str
    assignment: str
    mesh: str


@final  # no other keys: a check for a key tells the kinds apart
class ShardedStepSig(TypedDict):
    """A step on pytrees of sharded arrays, exported for one mesh: each input's place among the
    step's arguments, and the paths of the state it returns (then its loss)."""

    kind: Literal["sharded_step"]
    function: str
    mesh: str
    paths: list[str]
    inputs: list[InputSig]
    returns: list[str]


Signature = ShardMapSig | PythonSig | LayoutSig | StepSig | ShardedStepSig


class CaseTargets(TypedDict, total=False):
    """A task's closed forms evaluated on one case (``tasks.Targets.on``): plain numbers, stored
    in the case's reference record, so that a student's check meets them only as data."""

    comm_bound: float
    comm_bytes: float
    plan_bytes: dict[str, float]
    collective_counts: dict[str, int]
    memory_bytes: float


class Verdict(TypedDict):
    ok: bool
    message: str


def ok() -> Verdict:
    return {"ok": True, "message": ""}


def fail(message: str) -> Verdict:
    return {"ok": False, "message": message}


class Census(TypedDict, total=False):
    """Collectives a compiled program runs, and what one device sends."""

    counts: dict[str, int]
    values_per_device: float | None
    bytes_per_device: float | None
    unbounded: list[str]
    program_bytes: float | None  # at the program's own dtypes
    link_values_per_device: float | None  # values x links crossed on a ring per mesh axis
    farthest_hops: int  # the most links one collective-permute pair crosses
    asked: dict[str, int]  # train_step: collectives the lowered program asks for (HLO spelling)
    by_axes: dict[str, dict[str, int]]  # mesh axes a collective spans ("data", "data,model") -> counts


class Measurement(TypedDict, total=False):
    """What the trusted side measured of one case. ``values`` is always there; the rest only
    where the program ran and the kind measures it."""

    values: Verdict
    asked: dict[str, int]  # collectives the lowered program asks for (HLO spelling)
    census: Census
    out_spec: SpecJSON | None
    matmul_waits: list[int]  # per matmul of the lowered program, the collective-permutes it waits for
    reference_census: Census
    targets: CaseTargets  # from the case's reference record, added where the case is scored
    figure: dict[str, Any]
    # sharded_step: per returned state leaf, [path, bytes one device holds, bytes of the whole]
    memory: list[tuple[str, int, int]]
    # train_step
    dropout_free: Verdict
    devices: int
    num_params: int
    same_masks: list[int]


Status = Literal["passed", "failed", "error", "timeout", "crashed", "invalid"]


@dataclass
class TestResult:
    """One row of a student's results: one part of one graded function."""

    name: str
    grade_id: str
    score: float
    max_score: float
    status: str  # passed | failed, or the whole notebook's status when it could not be graded
    message: str
    visibility: str  # visible | hidden
    figure: dict[str, Any] | None = None  # a picture for the feedback; visible tests only

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
