"""The trusted worker: run reference functions, or a submission's exported artifacts, on inputs
made here from seeds, and measure them on the same mesh.

It runs in its own process so that a submission's program that never ends costs only a time limit.

    python -m autograder.evaluate JOB_JSON
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import harness, training, training_verdict
from .inputs import make_inputs
from .measure import compare_python, compare_values, execute, host_value, normalize_spec
from .mesh import MeshSpec, signature, use_cpu_devices
from .trace import custom_call_targets

# Custom calls that sharding annotations lower to; anything else (host callbacks above all) is refused.
ALLOWED_CUSTOM_CALLS = frozenset(
    {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "xla.sdy.GlobalToLocalShape",
     "xla.sdy.LocalToGlobalShape", "xla.sdy.FuncResultSharding"}
)  # fmt: skip
MAX_ARTIFACT_BYTES = 8 << 20


class MeshMismatch(Exception):
    """The sandbox ran on a different mesh than the grader: a hard error, never a score."""


# ---------------------------------------------------------------- references


def reference_function(provider: dict[str, Any], task: str) -> Callable[..., Any]:
    """The instructor's solution, or a task's public oracle where no solutions are at hand."""
    if provider["kind"] == "solutions":
        from .course import Course
        from .specs import ASSIGNMENTS

        course = Course(Path(provider["root"]))
        assignment = next(a for a in ASSIGNMENTS.values() if a.solutions == provider["module"])
        return course.reference(assignment, task)
    from .specs import get

    oracle = get(provider["assignment"]).task(task).oracle
    if oracle is None:
        raise ValueError(f"task {task} has no oracle; grading it needs the solutions")
    return oracle


def store_reference(test: dict[str, Any], fn: Callable[..., Any]) -> None:
    sig = test["sig"]
    prefix = Path(test["store"])
    if sig["kind"] == "python":
        record: dict[str, Any] = {"result": harness.call_python(fn, sig)}
    else:
        wrapped, _, mesh = harness.build(fn, sig)
        out, structure = execute(wrapped, make_inputs(sig, test["seed"], mesh), mesh)
        value, dtype = host_value(out)
        np.save(prefix.with_suffix(".npy"), value.astype(np.float32) if dtype == "bfloat16" else value)
        record = {"dtype": dtype, "structure": structure}
    prefix.with_suffix(".tmp").write_text(json.dumps(record))
    prefix.with_suffix(".tmp").replace(prefix.with_suffix(".json"))


def load_reference(prefix: str) -> tuple[dict[str, Any], np.ndarray | None]:
    record = json.loads(Path(prefix).with_suffix(".json").read_text())
    if "result" in record:
        return record, None
    return record, np.load(Path(prefix).with_suffix(".npy"))


# ---------------------------------------------------------------- submissions


def artifact_problems(exported: Any, sig: dict[str, Any], mesh: Any) -> list[str]:
    """Reasons to refuse an artifact: wrong mesh, shardings or signature, or code that is not
    a pure array program."""
    problems = []
    platform = mesh.devices.flat[0].platform
    if tuple(exported.platforms) != (platform,):
        problems.append(f"exported for {exported.platforms}, graded on {platform}")
    if exported.nr_devices != mesh.size:
        problems.append(f"exported for {exported.nr_devices} devices, the mesh has {mesh.size}")
    if exported.disabled_safety_checks:
        problems.append("exported with safety checks disabled")
    calls = custom_call_targets(exported.mlir_module()) - ALLOWED_CUSTOM_CALLS
    if calls:
        problems.append(f"holds custom calls or host callbacks: {', '.join(sorted(calls))}")
    want = [(tuple(i["shape"]), str(harness.jax_dtype(i["dtype"])), i["spec"]) for i in sig["inputs"]]
    got = [(tuple(a.shape), str(a.dtype), _aval_spec(a, mesh)) for a in exported.in_avals]
    if [(s, d, normalize_spec(p, len(s))) for s, d, p in want] != got:
        problems.append(f"inputs are {got}, the task's are {want}")
    out_want, outs = _out_specs(exported, sig, mesh)
    if outs != [out_want]:
        problems.append(f"output sharding is {outs}, the task asks for {[out_want]}")
    return problems


def _out_specs(exported: Any, sig: dict[str, Any], mesh: Any) -> tuple[Any, list[Any]]:
    """The output sharding the task asks for, and the artifact's."""
    return normalize_spec(harness.expected_out_spec(sig, mesh), 99), [_aval_spec(a, mesh) for a in exported.out_avals]


def _mesh_sizes(mesh: Any) -> dict[str, int]:
    return dict(zip(mesh.axis_names, mesh.axis_sizes))


def _sharding_figure(exported: Any, sig: dict[str, Any], mesh: Any) -> dict[str, Any] | None:
    """A picture of the two layouts when the artifact's output sharding is not the task's."""
    want, outs = _out_specs(exported, sig, mesh)
    if len(outs) != 1 or not isinstance(outs[0], list) or outs == [want]:
        return None
    shape = list(exported.out_avals[0].shape)
    return {"kind": "sharding", "mesh": _mesh_sizes(mesh), "shape": shape, "expected": want, "returned": outs[0]}


def _varying_figure(test: dict[str, Any]) -> dict[str, Any] | None:
    """A picture for a result that varies along axes where the task asks for one value."""
    sig = test["sig"]
    if sig["kind"] != "shard_map" or sig.get("out_spec") is None:
        return None
    spec = MeshSpec.parse(sig["mesh"])
    varying = [a for a in test.get("varying", []) if a in spec.names]
    if not varying:
        return None
    _, expected = load_reference(test["reference"])
    sizes = dict(zip(spec.names, spec.shape))
    return {"kind": "sharding", "mesh": sizes, "shape": list(expected.shape),
            "expected": normalize_spec(sig["out_spec"], expected.ndim), "varying": varying}  # fmt: skip


def _aval_spec(aval: Any, mesh: Any) -> Any:
    sharding = getattr(aval, "sharding", None)
    abstract = getattr(sharding, "mesh", None)
    if abstract is None or tuple(abstract.axis_names) != tuple(mesh.axis_names):
        return "not on the task's mesh"
    if tuple(abstract.axis_sizes) != tuple(mesh.axis_sizes):
        return "not on the task's mesh"
    if tuple(abstract.axis_types) != tuple(mesh.axis_types):
        return "on different axis types"
    return normalize_spec(harness.spec_to_json(tuple(sharding.spec)), len(aval.shape))


def measure_artifact(test: dict[str, Any], mesh: Any) -> dict[str, Any]:
    import jax

    sig = test["sig"]
    data = Path(test["artifact"]).read_bytes()
    if len(data) > MAX_ARTIFACT_BYTES:
        return _refused(f"artifact is {len(data)} bytes; the limit is {MAX_ARTIFACT_BYTES}")
    try:
        exported = jax.export.deserialize(bytearray(data))
    except Exception as err:  # anything malformed is the sandbox's fault, never the grader's
        return _refused(f"artifact could not be read: {type(err).__name__}")
    problems = artifact_problems(exported, sig, mesh)
    if problems:
        figure = _sharding_figure(exported, sig, mesh)
        return {**_refused("; ".join(problems)), **({"figure": figure} if figure else {})}
    record, expected = load_reference(test["reference"])
    args = make_inputs(sig, test["seed"], mesh)
    try:
        out, structure = execute(jax.jit(exported.call), args, mesh)
    except Exception as err:  # a failure at run time, e.g. an out-of-bounds shape mix-up
        return {"values": {"ok": False, "message": f"failed to run: {str(err)[:300]}"}}
    values = compare_values(out, expected, record["dtype"], tuple(test["tolerance"]), mesh)
    return {"values": values, **structure, "reference_census": record["structure"]["census"]}


def _refused(reason: str) -> dict[str, Any]:
    return {"values": {"ok": False, "message": f"artifact refused: {reason}"}}


def measure(test: dict[str, Any]) -> dict[str, Any]:
    if test["sig"]["kind"] in training.KINDS:
        return training_verdict.measure(test)
    if test.get("failure"):
        figure = _varying_figure(test)
        return {"values": {"ok": False, "message": test["failure"]}, **({"figure": figure} if figure else {})}
    if test["sig"]["kind"] == "python":
        record, _ = load_reference(test["reference"])
        return {"values": compare_python(test["result"], record["result"])}
    mesh = MeshSpec.parse(test["sig"]["mesh"]).build()
    return measure_artifact(test, mesh)


def check_meshes(reported: dict[str, Any]) -> None:
    for name, theirs in reported.items():
        ours = signature(MeshSpec.parse(name).build())
        if theirs != ours:
            raise MeshMismatch(f"mesh {name}: the sandbox ran on {theirs}, the grader on {ours}")


def use_compile_cache(path: str) -> None:
    """Keep every compiled program: a class hands in many copies of the same few programs."""
    import jax

    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    use_cpu_devices(job["num_devices"])
    if job["mode"] == "reference":
        runs = training.LayoutRuns(lambda name: reference_function(job["provider"], name))
        for test in job["tests"]:
            if test["sig"]["kind"] in training.KINDS:
                training_verdict.store_reference(test, runs.lookup, runs)
            else:
                store_reference(test, reference_function(job["provider"], test["sig"]["function"]))
        return 0
    if job.get("compile_cache"):
        use_compile_cache(job["compile_cache"])
    try:
        check_meshes(job["meshes"])
    except MeshMismatch as err:
        print(f"jaxcourse: error: {err}", file=sys.stderr)
        return 3
    with open(job["progress"], "a") as progress:
        for test in job["tests"]:
            # A "started" line lets the parent time each test on its own clock.
            for record in ({"started": test["id"]}, None):
                record = record or {"id": test["id"], **measure(test)}
                progress.write(json.dumps(record) + "\n")
                progress.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
