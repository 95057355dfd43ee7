"""The shard_map kind, trusted half: the reference run on inputs made here, and a submission's
exported program refused or run on the same mesh and inputs, then measured."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..core import program_shape, pspec
from ..core.mesh import MeshSpec
from ..core.records import Measurement, ShardedStepSig, ShardingFigure, ShardMapSig
from ..core.tolerance import Tolerance
from ..harness import shard_map as harness
from . import policy, projection, reference
from .inputs import make_inputs
from .jobs import Evaluation, ReferenceJob, References
from .measure import compare_values, execute, host_value, measured
from .verdict import score as score  # re-exported: this kind's verdict, under the registry's name


def reference_record(job: ReferenceJob, refs: References) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    sig = cast(ShardMapSig, job["sig"])  # this module is handed only its own kind
    if sig.get("at_scale"):
        return projection.reference_record(refs.lookup(sig["function"]), sig), {}
    wrapped, _, mesh = harness.build(refs.lookup(sig["function"]), sig)
    out, structure = execute(wrapped, make_inputs(sig, job["seed"], mesh), mesh)
    value, dtype = host_value(out)
    stored = value.astype(np.float32) if dtype == "bfloat16" else value
    return {"dtype": dtype, "structure": structure}, {"value": stored}


def artifact_problems(exported: Any, sig: ShardMapSig, mesh: Any) -> list[str]:
    """Reasons to refuse an artifact: the policy's, then this task's inputs and output sharding."""
    problems = policy.program_problems(exported, mesh) + input_problems(exported, sig, mesh)
    out_want, outs = _out_specs(exported, sig, mesh)
    if outs != [out_want]:
        problems.append(f"output sharding is {outs}, the task asks for {[out_want]}")
    return problems


def input_problems(exported: Any, sig: ShardMapSig | ShardedStepSig, mesh: Any) -> list[str]:
    """The artifact's inputs against the task's: shapes, dtypes and shardings, in order."""
    want = [(tuple(i["shape"]), str(harness.jax_dtype(i["dtype"])), i["spec"]) for i in sig["inputs"]]
    got = [(tuple(a.shape), str(a.dtype), _aval_spec(a, mesh)) for a in exported.in_avals]
    if [(s, d, pspec.normalize(p, len(s))) for s, d, p in want] != got:
        return [f"inputs are {got}, the task's are {want}"]
    return []


def _out_specs(exported: Any, sig: ShardMapSig, mesh: Any) -> tuple[Any, list[Any]]:
    """The output sharding the task asks for, and the artifact's."""
    want = pspec.normalize(harness.expected_out_spec(sig, mesh), 99)
    return want, [_aval_spec(a, mesh) for a in exported.out_avals]


def _sharding_figure(exported: Any, sig: ShardMapSig, mesh: Any) -> ShardingFigure | None:
    """A picture of the two layouts when the artifact's output sharding is not the task's."""
    want, outs = _out_specs(exported, sig, mesh)
    if len(outs) != 1 or not isinstance(outs[0], list) or outs == [want]:
        return None
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    shape = list(exported.out_avals[0].shape)
    return {"kind": "sharding", "mesh": sizes, "shape": shape, "expected": want, "returned": outs[0]}


def _varying_figure(test: Evaluation) -> ShardingFigure | None:
    """A picture for a result that varies along axes where the task asks for one value."""
    sig = cast(ShardMapSig, test["sig"])  # this module is handed only its own kind
    if sig.get("out_spec") is None:
        return None
    spec = MeshSpec.parse(sig["mesh"])
    varying = [a for a in test.get("varying", []) if a in spec.names]
    if not varying:
        return None
    _, arrays = reference.load(test["reference"])
    expected = arrays["value"]
    return {
        "kind": "sharding",
        "mesh": spec.axis_sizes,
        "shape": list(expected.shape),
        "expected": pspec.normalize(sig["out_spec"] or [], expected.ndim),
        "varying": varying,
    }


def _aval_spec(aval: Any, mesh: Any) -> Any:
    sharding = getattr(aval, "sharding", None)
    abstract = getattr(sharding, "mesh", None)
    if abstract is None or tuple(abstract.axis_names) != tuple(mesh.axis_names):
        return "not on the task's mesh"
    if tuple(abstract.axis_sizes) != tuple(mesh.axis_sizes):
        return "not on the task's mesh"
    if tuple(abstract.axis_types) != tuple(mesh.axis_types):
        return "on different axis types"
    return pspec.of_array(aval)


def measure(test: Evaluation) -> Measurement:
    """A sandbox failure as it is; else the artifact, refused or run and compared."""
    import jax

    if test.get("failure"):
        figure = _varying_figure(test)
        failed: Measurement = {"values": {"ok": False, "message": test["failure"]}}
        return {**failed, "figure": figure} if figure else failed
    sig = cast(ShardMapSig, test["sig"])  # this module is handed only its own kind
    mesh = MeshSpec.parse(sig["mesh"]).build()
    try:
        exported = policy.load(test["artifact"])
    except policy.Refused as err:
        return policy.refused(str(err))
    problems = artifact_problems(exported, sig, mesh)
    if problems:
        figure = _sharding_figure(exported, sig, mesh)
        refused = policy.refused("; ".join(problems))
        return {**refused, "figure": figure} if figure else refused
    record, arrays = reference.load(test["reference"])
    if sig.get("at_scale"):
        return projection.measured_or_why(jax.jit(exported.call), sig, record)
    args = make_inputs(sig, test["seed"], mesh)
    try:
        out, structure = execute(jax.jit(exported.call), args, mesh, drawn=not test.get("hidden", False))
    except Exception as err:  # a failure at run time, e.g. an out-of-bounds shape mix-up
        return {"values": {"ok": False, "message": f"failed to run: {str(err)[:300]}"}}
    tolerance = Tolerance(*test["tolerance"])
    values = compare_values(out, arrays["value"], record["dtype"], tolerance, mesh, test.get("sample", False))
    case = measured(values, structure, record["structure"])
    case["program"] = program_shape.nodes(policy.module_text(exported))
    return case
