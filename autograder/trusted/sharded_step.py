"""The sharded_step kind, trusted half: the reference step and a submission's exported step run
here on the same mesh and inputs, its returned state and loss compared leaf by leaf, its compiled
HLO read for collectives and bytes, and what each device holds of the returned state measured from
the arrays the step returned: the bytes of the largest shard of each leaf on any one device; and at
the step's peak, from XLA's buffer assignment of the step run with the donation its artifact
declares (so a step that donates the state it replaces needs less)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ..core import program_shape
from ..core.mesh import MeshSpec
from ..core.records import ArrayMeasurement, Measurement, ShardedStepSig, fail, ok
from ..core.tolerance import Tolerance
from ..harness import sharded_step as harness
from . import policy, projection, reference
from .inputs import make_inputs
from .jobs import Evaluation, ReferenceJob, References
from .measure import compare_values, execute, held_per_device, host_value, measured
from .shard_map import input_problems
from .verdict import score as score  # re-exported: the array tasks' verdict, memory parts included

ARGUMENT = re.compile(r"%arg(\d+):")  # where each argument of a module's main function begins


def reference_record(job: ReferenceJob, refs: References) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The reference step's record (dtypes, program, what each device holds of each returned
    leaf) and its outputs on the case's inputs."""
    sig = cast(ShardedStepSig, job["sig"])  # this module is handed only its own kind
    if sig.get("at_scale"):
        return projection.reference_record(refs.lookup(sig["function"]), sig), {}
    wrapped, _, mesh = harness.build(refs.lookup(sig["function"]), sig)
    outs, structure = execute(wrapped, make_inputs(sig, job["seed"], mesh), mesh)
    values = [host_value(out) for out in outs]
    arrays = {f"out{i}": v.astype(np.float32) if d == "bfloat16" else v for i, (v, d) in enumerate(values)}
    record = {"dtypes": [dtype for _, dtype in values], "structure": structure, "memory": _held(sig, outs)}
    return record, arrays


def _held(sig: ShardedStepSig, outs: list[Any]) -> list[tuple[str, int, int]]:
    """Per returned state leaf: its path, the bytes one device holds of it, and its whole size."""
    return [(path, held_per_device(out), int(out.nbytes)) for path, out in zip(sig["returns"], outs)]


def measure_outputs(
    call: Callable[..., Any],
    sig: ShardedStepSig,
    seed: int,
    reference: dict[str, Any],
    expected: list[np.ndarray],
    tolerance: Tolerance | tuple[float, float],
    sample: bool = False,
) -> ArrayMeasurement:
    """Run ``call`` (the flat step) on the case's inputs; values, program and memory held, beside
    the ``reference`` record's (``sample``: see ``compare_values``)."""
    mesh = MeshSpec.parse(sig["mesh"]).build()
    try:
        outs, structure = execute(call, make_inputs(sig, seed, mesh), mesh)
    except Exception as err:  # the student's program failed at run time
        return {"values": fail(f"failed to run: {type(err).__name__}: {str(err)[:300]}")}
    names = [*sig["returns"], "loss"]
    if len(outs) != len(names):
        return {"values": fail(f"the step returned {len(outs)} arrays; it must return {len(names)}")}
    for name, out, want, dtype in zip(names, outs, expected, reference["dtypes"]):
        verdict = compare_values(out, want, dtype, tolerance, mesh, sample)
        if not verdict["ok"]:
            named = fail(f"{name}: {verdict['message']}")
            if "detail" in verdict:
                named["detail"] = f"{name}: {verdict['detail']}"
            return measured(named, structure, reference["structure"])
    case = measured(ok(), structure, reference["structure"])
    case["memory"] = _held(sig, outs)
    case["reference_memory"] = [(path, int(mine), int(whole)) for path, mine, whole in reference["memory"]]
    return case


def donated_arguments(exported: Any) -> tuple[int, ...]:
    """The positions of the arguments an exported step donates: those its module's ``main``
    aliases to a result or marks as a donor (numbered among the arguments the module kept).
    Whatever the artifact declares is real: the step is then run with those arguments donated."""
    text = policy.module_text(exported)
    start = text.find("func.func public @main(")
    signature = text[start : text.find("{\n", start)] if start >= 0 else ""
    marks = list(ARGUMENT.finditer(signature))
    kept = exported.module_kept_var_idx
    donors = set()
    for mark, after in zip(marks, [*marks[1:], None]):
        piece = signature[mark.end() : after.start() if after else len(signature)]
        number = int(mark.group(1))
        if number < len(kept) and ("tf.aliasing_output" in piece or "jax.buffer_donor" in piece):
            donors.add(kept[number])
    return tuple(sorted(donors))


def measure(test: Evaluation) -> Measurement:
    """A sandbox failure as it is; else the artifact, refused or run and measured."""
    import jax

    if test.get("failure"):
        return {"values": fail(test["failure"])}
    sig = cast(ShardedStepSig, test["sig"])  # this module is handed only its own kind
    mesh = MeshSpec.parse(sig["mesh"]).build()
    try:
        exported = policy.load(test["artifact"])
    except policy.Refused as err:
        return policy.refused(str(err))
    problems = policy.program_problems(exported, mesh) + input_problems(exported, sig, mesh)
    if problems:
        return policy.refused("; ".join(problems))
    call = jax.jit(exported.call, donate_argnums=donated_arguments(exported))
    if sig.get("at_scale"):
        return projection.measured_or_why(call, sig, reference.load(test["reference"])[0])
    tolerance = Tolerance(*test["tolerance"])
    case = _against(call, sig, test["seed"], reference.load(test["reference"]), tolerance, test.get("sample", False))
    case["program"] = program_shape.nodes(policy.module_text(exported))
    return case


def _against(
    call: Callable[..., Any],
    sig: ShardedStepSig,
    seed: int,
    expected: tuple[dict[str, Any], dict[str, np.ndarray]],
    tolerance: Tolerance,
    sample: bool,
) -> ArrayMeasurement:
    """The step's outputs against the reference's."""
    record, arrays = expected
    outs = [arrays[f"out{i}"] for i in range(len(record["dtypes"]))]
    return measure_outputs(call, sig, seed, record, outs, tolerance, sample)
