"""Plain-data records that cross module and process boundaries: call signatures (what the
sandbox is told; never values), measurements (what the trusted side found) and test results
(what a student is told). JSON-shaped, so they travel as they are between processes."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, NotRequired, Required, TypedDict, final

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
    at_scale: NotRequired[bool]  # the task's realistic size: compiled, never run (trusted/projection.py)


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
    at_scale: NotRequired[bool]  # the task's realistic size: compiled, never run (trusted/projection.py)


Signature = ShardMapSig | PythonSig | LayoutSig | StepSig | ShardedStepSig


class CaseTargets(TypedDict, total=False):
    """A task's closed forms evaluated on one case (``tasks.Targets.on``): plain numbers, stored
    in the case's reference record, so that a student's check meets them only as data."""

    comm_bytes: float
    plan_bytes: dict[str, float]


class Verdict(TypedDict):
    ok: bool
    message: str
    # Wrong array values: where the first wrong device's piece first differs, and the error's
    # pattern over the whole array (trusted.measure.compare_values), a few short lines.
    detail: NotRequired[str]


def ok() -> Verdict:
    return {"ok": True, "message": ""}


def fail(message: str) -> Verdict:
    return {"ok": False, "message": message}


class Timeline(TypedDict):
    """A program's steps (its collective-permutes, all-to-alls and library collectives, as it runs
    them), each as its
    [source, target] pairs and, per pair, the devices whose inputs the sent value was made from;
    and per slot (before the first step, then after each) per device, the devices whose inputs its
    matmuls read (None: it runs none there)."""

    kinds: list[str]
    steps: list[list[list[int]]]
    carried: list[list[list[int]]]
    computes: list[list[list[int] | None]]


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
    timeline: Timeline | None  # what each device sends and multiplies, step by step (core/timeline.py)


class TrafficFigure(TypedDict):
    """What a function sent per device against the least it could (and the reference's)."""

    kind: Literal["traffic"]
    unit: str  # "bytes", "values" or "value-hops"
    sent: float
    minimum: float
    reference: float | None
    case: str


class ShardingFigure(TypedDict):
    """Where each block of the output lives: as asked for, and as returned (or, for one value
    that differs along ``varying`` axes, the asked-for layout with a copy per coordinate)."""

    kind: Literal["sharding"]
    mesh: dict[str, int]
    shape: list[int]
    expected: SpecJSON
    returned: NotRequired[SpecJSON]
    varying: NotRequired[list[str]]


class OverlapFigure(TypedDict):
    """How many transfers each matmul waits for, against a ring's ``steps``."""

    kind: Literal["overlap"]
    steps: int
    waits: list[int]
    ok: bool
    case: str


class MemoryFigure(TypedDict):
    """Per returned leaf: its path, the bytes one device holds, and its share of them."""

    kind: Literal["memory"]
    leaves: list[tuple[str, int, float]]
    case: str


class RingFigure(TypedDict):
    """What every device sends and multiplies at each step of a program that passes blocks on, from
    its compiled collectives (a ``Timeline``): steps across, devices down;
    ``far`` the [step, source, target] permutes past a neighbour. A figure from a results file
    written before ``kinds`` has only permutes, and neither labels nor matmuls."""

    kind: Literal["ring"]
    devices: int
    steps: list[list[list[int]]]
    far: list[list[int]]
    case: str
    kinds: NotRequired[list[str]]
    carried: NotRequired[list[list[list[int]]]]
    computes: NotRequired[list[list[list[int] | None]]]


# A picture for a student's feedback, made on the trusted side, drawn by grading/reports/figures.py.
Figure = TrafficFigure | ShardingFigure | OverlapFigure | MemoryFigure | RingFigure


class Measurement(TypedDict, total=False):
    """What the trusted side measured of one case, whatever its kind: ``values`` always, the
    case's closed forms where it is scored, and a picture where one explains it. A kind that
    measures more extends it (``ArrayMeasurement``, ``StepMeasurement``)."""

    values: Required[Verdict]
    targets: CaseTargets  # from the case's reference record, added where the case is scored
    figure: Figure


class ResourceSignature(TypedDict):
    """What a compiled program spends on one device, measured the same way for a submission and
    its reference on the same mesh (``trusted.measure.signature``): the structural parts of a
    task hold each dimension to a bound of the reference's (``tasks.Bounds``)."""

    flops: float | None  # dot and convolution FLOPs (core/flops.py); None: a loop of unknown length runs some
    peak: int | None  # bytes at the program's peak: arguments, results, temporaries, less what is donated
    traffic: dict[str, float] | None  # bytes sent over each set of mesh axes ("data", "data,model"); None: unbounded
    resident: int  # bytes of the results one device holds after the call


class ProgramStructure(TypedDict):
    """What a compiled program does, read from its HLO and its output (``trusted.measure.execute``)."""

    asked: dict[str, int]  # collectives the lowered program asks for (HLO spelling)
    census: Census
    out_spec: SpecJSON | None
    matmul_waits: list[int]  # per matmul of the lowered program, the collective-permutes it waits for
    signature: ResourceSignature


class ArrayMeasurement(Measurement, total=False):
    """shard_map and sharded_step: what the program asks for, what its compiled HLO runs, how its
    output is laid out, and (sharded_step) what each device holds of the returned state."""

    asked: dict[str, int]  # collectives the lowered program asks for (HLO spelling)
    census: Census
    out_spec: SpecJSON | None
    matmul_waits: list[int]  # per matmul of the lowered program, the collective-permutes it waits for
    reference_census: Census
    signature: ResourceSignature  # what the program spends on one device
    reference_signature: ResourceSignature  # the reference's, on the same mesh and case
    memory: list[tuple[str, int, int]]  # per returned state leaf: path, bytes one device holds, of the whole
    reference_memory: list[tuple[str, int, int]]  # the reference step's, leaf by leaf
    program: list[str]  # the exported program's shape (core/program_shape.py), for finding copies


class CollectiveRecord(TypedDict):
    """One collective as the network and the overlap read it (``overlap.CollectiveRun``)."""

    kind: str
    axes: list[str]
    array_bytes: float
    times: int
    pairs: list[list[int]]
    scope: int  # its computation, in CostRecord.scopes
    beside: list[int]  # the work of that computation it may run beside, by index


class ScopeRecord(TypedDict):
    """A computation that runs collectives (``overlap.Scope``)."""

    times: int
    work: list[list[float]]  # per run, each piece of work's FLOPs and HBM bytes


class CostRecord(TypedDict):
    """A compiled program's resource signature as the roofline reads it (``roofline.Cost``)."""

    flops: float
    hbm_bytes: float
    traffic: dict[str, float]
    peak: int | None
    dots: dict[str, float]
    collectives: list[CollectiveRecord]
    scopes: list[ScopeRecord]


class ProjectedMeasurement(Measurement, total=False):
    """A part's case at its realistic size, compiled and never run: what its program and the
    reference's would spend there, on the case's mesh."""

    cost: CostRecord
    reference_cost: CostRecord
    mesh: dict[str, int]


class ScaledProgram(TypedDict):
    """One function's case at its realistic size in a report: the student's program's cost and
    the reference's, projected on each machine where they are shown (``roofline.project``)."""

    case: str
    why: str
    mesh: dict[str, int]
    cost: CostRecord
    reference: CostRecord


class StepMeasurement(Measurement, total=False):
    """train_step: the step's values when dropout plays no part, its census, and which devices
    draw the same dropout mask as device 0."""

    dropout_free: Verdict
    census: Census
    devices: int
    num_params: int
    same_masks: list[int]


class SignatureRow(TypedDict):
    """One dimension of a program's signature beside the reference's, and the ratio to it that
    each part judging it allows (none: no part judges it)."""

    dimension: str
    yours: float | None
    reference: float | None
    bounds: dict[str, float]  # part -> the most it allows, as a ratio to the reference's


class SignatureTable(TypedDict):
    """A case's signature beside the reference's, as a student sees it with the technique part."""

    case: str
    rows: list[SignatureRow]


Status = Literal["passed", "failed", "error", "timeout", "crashed", "invalid"]


@dataclass(frozen=True)
class Standing:
    """A student's place on her class's leaderboard (``grading/reports/leaderboard.py``) when her feedback
    was written: among the correct submissions kept then, by projected time on ``machine``."""

    rank: int
    of: int
    machine: str
    seconds: float
    fastest: float
    reference: float | None


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
    figure: Figure | None = None  # a picture for the feedback; visible tests only
    signature: SignatureTable | None = None  # the technique part's: its case's signature beside the reference's
    detail: str | None = None  # the values part's: where its first wrong visible case differs, and how

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
