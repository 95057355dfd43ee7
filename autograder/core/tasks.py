"""Declarative task specs: what each graded function is, how it is called, and how it is judged.

A task names a student function and the cases it is tried on. The same spec drives the sandbox
(which exports the function for each case's *signature*), the trusted evaluator (which makes the
inputs from seeds and runs the artifacts) and the notebooks' self-checks.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from . import pspec
from .kinds import Kind
from .mesh import MeshSpec
from .records import CaseTargets
from .tolerance import Tolerance

# Collectives as students write them (jax.lax names) and as the compiled HLO spells them.
COLLECTIVES: dict[str, str] = {
    "ppermute": "collective-permute",
    "psum": "all-reduce",
    "all_gather": "all-gather",
    "psum_scatter": "reduce-scatter",
    "all_to_all": "all-to-all",
}
HLO_TO_JAX: dict[str, str] = {hlo: name for name, hlo in COLLECTIVES.items()}

SpecEntry = None | str | tuple[str, ...]
# A Layout template's entry: None, an axis name or placeholder, or a tuple of entries.
TemplateEntry = None | str | tuple["TemplateEntry", ...]


@dataclass(frozen=True)
class Layout:
    """Where an array lives on the mesh, as a PartitionSpec template.

    Template entries: ``None``; a literal axis name; ``"AXIS"`` (the case's axis); ``"OTHERS"``
    (every other mesh axis); ``"ALL"`` (every mesh axis, in mesh order); or a tuple of these.
    """

    template: tuple[Any, ...]

    def spec(self, mesh: MeshSpec, axis: str | None) -> tuple[SpecEntry, ...]:
        return tuple(_resolve(entry, mesh, axis) for entry in self.template)

    def global_shape(self, local_shape: tuple[int, ...], mesh: MeshSpec, axis: str | None) -> tuple[int, ...]:
        sizes = mesh.axis_sizes
        spec = self.spec(mesh, axis)
        out = list(local_shape)
        for dim, entry in enumerate(spec):
            for name in _names(entry):
                out[dim] *= sizes[name]
        return tuple(out)


def _resolve(entry: TemplateEntry, mesh: MeshSpec, axis: str | None) -> SpecEntry:
    if isinstance(entry, tuple):
        names = tuple(n for part in entry for n in _names(_resolve(part, mesh, axis)))
        return names or None
    if entry == "AXIS":
        return axis
    if entry == "ALL":
        return tuple(mesh.names) or None
    if entry == "OTHERS":
        others = tuple(n for n in mesh.names if n != axis)
        return others or None
    return entry


def _names(entry: SpecEntry) -> tuple[str, ...]:
    if entry is None:
        return ()
    if isinstance(entry, str):
        return (entry,)
    return tuple(entry)


STACKED = Layout(("ALL",))  # dim 0 split over every axis: each device holds its own block
FEATURES = Layout(("OTHERS", "AXIS"))  # (batch, features): features over the case's axis
REPLICATED = Layout(())  # the same value on every device

Generator = Literal["normal", "small_int", "key", "index"]


@dataclass(frozen=True)
class Input:
    """One array argument: its layout and how its values are drawn."""

    layout: Layout
    draw: Generator = "normal"
    dtype: str | None = None  # None: the case's dtype (a step's key is "key" in any case)
    # "index": integers from 0 to the global size of dimension ``dim`` of input ``input``, less
    # one, given as (input, dim): a position in a cache that another input holds, say.
    below: tuple[int, int] | None = None

    def drawn(self, global_shapes: list[tuple[int, ...]]) -> str:
        """How the trusted side draws its values: an index's bound resolved on the case's shapes."""
        if self.draw != "index":
            return self.draw
        if self.below is None:
            raise ValueError("an input drawn as indices says below which input's dimension (below=(input, dim))")
        other, dim = self.below
        return f"index:{global_shapes[other][dim]}"


# Plain-Python tasks build no mesh: their cases need only arguments.
NO_MESH = "1:_"


@dataclass(frozen=True)
class Case:
    """One signature a task is tried on. ``shapes`` are per-device (local) shapes; plain-Python
    tasks give ``args`` only."""

    mesh: str = NO_MESH
    axis: str | None = None
    shapes: tuple[tuple[int, ...], ...] = ()
    dtype: str = "float32"
    kwargs: tuple[tuple[str, Any], ...] = ()
    args: tuple[Any, ...] = ()  # plain-Python tasks: the call's arguments, JSON-able
    hidden: bool = False
    # shard_map tasks: judge the gradient of half the output's squared norm w.r.t. the first input
    # (the backward pass's collectives); out of the repr, so other cases keep their seeds.
    differentiate: bool = field(default=False, repr=False)

    @property
    def mesh_spec(self) -> MeshSpec:
        return MeshSpec.parse(self.mesh)

    def label(self) -> str:
        if self.args:
            return "(" + ", ".join(map(_show_arg, self.args)) + ")"
        parts = [f"mesh {self.mesh}"]
        if self.axis:
            parts.append(f"axis {self.axis!r}")
        parts.append(self.dtype)
        parts.append(" ".join(str(tuple(s)) for s in self.shapes) + " per device")
        parts += [f"{k}={v}" for k, v in self.kwargs]
        if self.differentiate:
            parts.append("differentiated")
        return ", ".join(parts)


def _show_arg(arg: Any) -> str:
    if isinstance(arg, dict) and set(arg) == {"P"}:
        return pspec.show(arg["P"])
    if isinstance(arg, list):
        return repr(tuple(arg))
    return repr(arg)


# Bytes per value of each case dtype, as the program holds it (a backend may widen it on the wire).
DTYPE_BYTES: dict[str, int] = {"float32": 4, "bfloat16": 2, "int32": 4}


def at_dtype(values: Callable[[Case], float]) -> Callable[[Case], float]:
    """A closed form in values per device, as the bytes the grader counts: at the case's dtype."""
    return lambda case: values(case) * DTYPE_BYTES[case.dtype]


@dataclass(frozen=True)
class Training:
    """What a training assignment gives its students (model, data, mesh), under the names the
    harness and the verdicts use, so that neither knows any one assignment's names."""

    data_mesh: Callable[[], Any]  # the mesh every layout trains on
    local_batch: Callable[[int, int], Any]  # (step, seed) -> this process's rows of the batch
    init_state: Callable[[int], Any]  # seed -> the training state, a pytree of host arrays
    random_batch: Callable[[Any], dict[str, Any]]  # a NumPy Generator -> a global batch to judge a step on
    hold_batches: Callable[[int], None]  # tells this process how many batches its data holds
    batch_axis: str  # the mesh axis the batch is split over
    # State leaves (by path) and the value that makes dropout play no part in a step.
    quiet: dict[str, float] = field(default_factory=dict)
    batch_function: str = "make_global_batch"  # (local rows, mesh) -> the global batch
    train_function: str = "train"  # (num_steps, seed) -> (params, losses)
    params_prefix: str = "params/"  # state leaves under it are the model's parameters

    @property
    def layout_functions(self) -> tuple[str, str]:
        """What a layout run calls, and judges on the same run."""
        return self.batch_function, self.train_function


@dataclass(frozen=True)
class Step:
    """A training step on pytrees of sharded arrays: each input's place among the step's
    arguments (``"params/w1"``: key ``w1`` of the first argument, ``params``), and the arguments
    it returns updated, in order, before its loss."""

    paths: tuple[str, ...]
    returns: tuple[str, ...]

    def returned(self) -> tuple[str, ...]:
        """The paths of the state the step returns, in the order of ``paths``."""
        return tuple(p for arg in self.returns for p in self.paths if p.split("/")[0] == arg)


@dataclass(frozen=True)
class Targets:
    """The closed forms of the least a task's program can send, per case: a part's communication
    is held to the reference's on the same mesh, and its feedback shows this least beside it.

    They answer exercises (what a plan sends), so they live with the instructor's references
    (``solutions/<module>.py``, ``TARGETS``), which ``tests/specs/test_targets.py`` holds to them;
    a student meets them only as numbers, one set per visible case, in the records ``jaxcourse
    release`` ships."""

    # The least one device can send, in bytes at the program's own dtypes: shown beside what a
    # program sends (its part holds it to the reference's, which the tests hold to this).
    comm_bytes: Callable[[Case], float] | None = None
    # A part that lets the student choose: bytes per device of each plan (comm_bytes is the least).
    plan_bytes: Callable[[Case], dict[str, float]] | None = None

    def on(self, case: Case) -> CaseTargets:
        """Every closed form this task has, evaluated on ``case``."""
        figures: dict[str, Any] = {}
        for name in CaseTargets.__annotations__:
            form = getattr(self, name)
            if form is not None:
                figures[name] = form(case)
        return cast(CaseTargets, figures)  # the keys are CaseTargets' own, the values its forms'


Dimension = Literal["flops", "peak", "traffic", "resident"]


@dataclass(frozen=True)
class Bound:
    """How far one dimension of a program's resource signature may go above the reference's on
    the same mesh and case (a ratio), and what the technique keeps small there: the words a
    student reads when her program goes past it."""

    ratio: float
    why: str


@dataclass(frozen=True)
class Scale:
    """A part's case at a realistic size (8 devices, tens of thousands of tokens, thousands of
    features), and why that size: its program is compiled from shapes alone, never run, and its
    cost projected on real machines."""

    case: Case
    why: str


@dataclass(frozen=True)
class Bounds:
    """The bounds one structural part holds a program's signature to (``records.ResourceSignature``):
    FLOPs, peak memory, bytes sent over each set of mesh axes, results held after the call. A
    dimension left ``None`` is not this part's to judge."""

    flops: Bound | None = None
    peak: Bound | None = None
    traffic: Bound | None = None
    resident: Bound | None = None

    def items(self) -> list[tuple[Dimension, Bound]]:
        """The dimensions this part judges, in the order a student reads them."""
        dims: tuple[Dimension, ...] = ("resident", "peak", "flops", "traffic")
        return [(d, bound) for d in dims if (bound := getattr(self, d)) is not None]


def least_traffic(why: str) -> dict[str, Bounds]:
    """The bounds of a part whose communication may send no more than the reference's, on each
    set of mesh axes (a lecture's exercise: its technique is its collectives alone)."""
    return {"communication": Bounds(traffic=Bound(1.0, why))}


# What a kind's hidden cases change by default: an array program meets other meshes and shapes;
# a plain-Python function other arguments, which its task names where it can.
HIDDEN_VARY: dict[Kind, str] = {
    "shard_map": "other meshes, axes, sizes and dtypes",
    "sharded_step": "other meshes and sizes",
    "python": "other arguments than the visible cases'",
    "training": "another mesh of processes and devices",
    "train_step": "another mesh of processes and devices",
}


@dataclass(frozen=True)
class Task:
    """A graded function: how it is called, which cases it meets, and what it may use."""

    name: str
    grade_id: str
    kind: Kind
    # parts: "values", "hidden values", then the structural ones: "technique" (what the part
    # teaches: its collectives and its signature within bounds), judged first, and "communication",
    # "memory", "peak memory" (each within a tight bound), judged once the technique holds
    points: dict[str, float]
    cases: tuple[Case, ...]
    inputs: tuple[Input, ...] = ()
    out_layout: Layout | None = None  # None: per-device results, stacked over every axis
    tolerance: Mapping[str, Tolerance | tuple[float, float]] = field(default_factory=dict)
    allowed: frozenset[str] | None = None  # jax collective names; None means any
    # Each structural part's bounds on the program's signature against the reference's: the
    # technique's loose ones (past them it is another algorithm), the others' tight ones.
    bounds: dict[str, Bounds] = field(default_factory=dict)
    # A ring: every ppermute pair must be neighbours on the case axis's ring (one link apart).
    neighbours_only: bool = False
    # A collective matmul: one partial matmul per ring step, the one of step s waiting only for
    # the s blocks that have arrived (core/dataflow.py), so compute hides the transfers.
    overlapped: bool = False
    # A combine whose collectives are the lesson (a split cache's softmax statistics): each
    # device's steps are drawn in the technique's feedback, as a ring's are.
    steps_pictured: bool = False
    # Collectives per mesh axis: on each axis named, only these (jax names); on no other, none.
    axis_collectives: tuple[tuple[str, frozenset[str]], ...] = ()
    training: Training | None = None  # training kinds: what the students are given
    step: Step | None = None  # sharded_step: the step's arguments and what it returns
    # What the hidden cases change, told to a student whose visible cases pass (never the cases
    # themselves); empty: what a task of its kind changes (HIDDEN_VARY).
    hidden_vary: str = ""
    # The size its time is projected at on real machines (core/roofline.py): compiled, never run.
    at_scale: Scale | None = None

    def __post_init__(self) -> None:
        if self.at_scale is not None and self.kind not in ("shard_map", "sharded_step"):
            raise ValueError(f"{self.name}: a realistic size is projected for array programs only, not {self.kind}")

    @property
    def draws_steps(self) -> bool:
        """Whether the technique's feedback draws what each device does at each step: a part that
        passes blocks on (a ring, a collective matmul, a pipeline, experts) or asks for it."""
        return self.overlapped or self.neighbours_only or "all_to_all" in (self.allowed or ()) or self.steps_pictured

    @property
    def max_score(self) -> float:
        return float(sum(self.points.values()))

    def tolerance_for(self, dtype: str) -> Tolerance:
        return Tolerance(*self.tolerance.get(dtype, (0.0, 0.0)))

    def hidden_hint(self) -> str:
        """Where to look when a hidden case fails and every visible one passes."""
        return f"a hidden case fails; check your function on {self.hidden_vary or HIDDEN_VARY[self.kind]}"

    def with_hidden(self, hidden: tuple[Case, ...]) -> Task:
        return replace(self, cases=self.cases + tuple(replace(c, hidden=True) for c in hidden))

    def step_args(self) -> Step:
        """The step's arguments; a sharded_step task without them is a mistake in its spec."""
        if self.step is None:
            raise TypeError(f"task {self.name} ({self.kind}) declares no step arguments")
        return self.step

    def given(self) -> Training:
        """The training setup; a training task without one is a mistake in its spec."""
        if self.training is None:
            raise TypeError(f"task {self.name} ({self.kind}) declares no training setup")
        return self.training


@dataclass(frozen=True)
class Assignment:
    """An nbgrader assignment whose graded cells are ``tasks``."""

    name: str
    notebook: str
    solutions: str  # module under the instructor's solutions/: references, hidden cases, targets
    tasks: tuple[Task, ...]

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tasks)

    def task(self, name: str) -> Task:
        for task in self.tasks:
            if task.name == name:
                return task
        raise KeyError(f"{self.name} has no task {name!r}")


def case_id(task: Task, index: int) -> str:
    return f"{task.name}/{index}"


def case_seed(assignment: str, task: str, case: Case, salt: str = "") -> int:
    """A seed fixed by what the case is, so inputs never depend on run order. The instructor's
    grader salts it with a secret of the course (``references.Provider``): the inputs a grade is
    decided on are then none that a student's own check, or a record shipped for it, has seen."""
    return zlib.crc32(f"{salt}{assignment}/{task}/{case!r}".encode()) % (1 << 31)
