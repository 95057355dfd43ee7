"""Training tasks, the trusted side: reference runs, measurements of what the sandbox returned,
and the scores with their reasons.

* ``make_global_batch`` and ``train`` are judged per layout (processes x devices each, always
  the same global mesh of 8 devices), against the reference run in the same layout: the global
  batch's shape, sharding and the rows on each device; the run finishing (a hang or a crash is
  reported by process and step); every process holding the same parameters; the parameters and
  the loss history within ``TOLERANCE`` of the reference's.
* ``train_step`` is judged from its exported program, run here on inputs the sandbox never saw:
  its new state and loss against the reference step's; the collectives in its compiled HLO (one
  all-reduce that carries every gradient once, nothing gathered); and whether its devices draw
  different dropout masks. That last one is measured, not read from the code: swap the examples
  of device 0 and device d and run the step again. When the gradients are averaged the update
  is a symmetric sum over devices, so with one mask for all it cannot change; with a mask per
  device it does. Collectives and dropout are judged only on steps that are right whenever
  dropout plays no part (a state whose hidden units are all off), so no points come without a
  working step, while a step whose only fault is its dropout keys still earns its collectives.
"""

from __future__ import annotations

import json
from math import prod
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import training
from .compare import TestResult
from .tasks import Case, Task

# Layouts differ only in where the all-reduce of the gradients runs (in one process, or across
# processes through gloo), which may add the 8 devices' values in another order: float32
# rounding, about 1e-7 relative per step, grown by a few steps of SGD with momentum. The public
# oracle (gradient accumulation instead of an all-reduce) differs the same way. Measured here:
# bit-identical across the three layouts, the oracle within this tolerance; every known mistake
# moves some parameter by 1e-2 or more after one step.
TOLERANCE = (1e-4, 1e-5)  # (rtol, atol) on every parameter and every loss
SAME_MASK = 1e-5  # relative change of the update below which two devices share a dropout mask
MAX_VALUES = 1 << 20  # numbers one layout's record may hold
DTYPES = frozenset({"float32", "float64", "int32", "bfloat16", "float16"})

Measured = list[tuple[Case, dict[str, Any]]]


class RecordError(ValueError):
    """What the sandbox sent back does not have the shape of a layout record."""


# ---------------------------------------------------------------- records from the sandbox


def decode(value: Any) -> np.ndarray:
    """An array from its JSON form, refusing anything that is not exactly that form."""
    if not (isinstance(value, dict) and set(value) == {"dtype", "shape", "data"}):
        raise RecordError("an array is not {dtype, shape, data}")
    dtype, shape, data = value["dtype"], value["shape"], value["data"]
    if dtype not in DTYPES or not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise RecordError(f"bad array header {dtype!r} {shape!r}")
    if not isinstance(data, list) or len(data) != prod(shape) or len(data) > MAX_VALUES:
        raise RecordError("array data does not match its shape")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data):
        raise RecordError("array data holds something other than numbers")
    return np.asarray(data, np.float64).reshape(shape)


def check_record(record: Any, processes: int) -> dict[str, Any]:
    """A layout record: its structure, every array decoded. Raises ``RecordError``."""
    if not isinstance(record, dict) or record.get("status") not in {"ok", "hang", "failed"}:
        raise RecordError("no status")
    if not isinstance(record.get("message"), str):
        raise RecordError("no message")
    procs = record.get("processes")
    if not isinstance(procs, list) or len(procs) != processes:
        raise RecordError(f"expected {processes} processes")
    if len(json.dumps(record)) > 16 * MAX_VALUES:
        raise RecordError("too large")
    checked = []
    for proc in procs:
        if not isinstance(proc, dict):
            raise RecordError("a process record is not an object")
        out: dict[str, Any] = {"batch": _check_batch(proc.get("batch"))}
        if record["status"] == "ok":
            params = proc.get("params")
            if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
                raise RecordError("parameters are not a mapping of paths to arrays")
            out["params"] = {path: decode(v) for path, v in params.items()}
            out["losses"] = decode(proc.get("losses"))
            out["mesh"] = proc.get("mesh")
        checked.append(out)
    return {"status": record["status"], "message": record["message"][:2000], "processes": checked}


def _check_batch(batch: Any) -> Any:
    if batch is None or (isinstance(batch, dict) and set(batch) == {"error"} and isinstance(batch["error"], str)):
        return batch
    if not isinstance(batch, dict):
        raise RecordError("the batch description is not an object")
    for entry in batch.values():
        ok = isinstance(entry, dict) and (
            set(entry) == {"error"}
            or (set(entry) == {"shape", "dtype", "shards", "spec"} and isinstance(entry["shards"], list))
        )
        if not ok:
            raise RecordError("a batch entry is malformed")
    return batch


# ---------------------------------------------------------------- references


def store_reference(test: dict[str, Any], lookup: training.Lookup, runs: training.LayoutRuns) -> None:
    """Compute and write the reference record for one training test."""
    prefix = Path(test["store"])
    sig = test["sig"]
    if sig["kind"] == "training":
        record = runs.run(sig)
        if record["status"] != "ok":
            raise RuntimeError(f"the reference run failed in {training.layout_label(sig['processes'], sig['devices'])}: {record['message']}")
        text = json.dumps(record)
    else:
        text = json.dumps(_store_step_reference(lookup("train_step"), sig, test["seed"], prefix))
    prefix.with_suffix(".tmp").write_text(text)
    prefix.with_suffix(".tmp").replace(prefix.with_suffix(".json"))


def _store_step_reference(train_step: Callable[..., Any], sig: dict[str, Any], seed: int, prefix: Path) -> dict:
    import jax

    inputs = StepInputs(sig, seed)
    call = jax.jit(training.flat_step(train_step, inputs.treedef))
    outputs, probe = inputs.expected(call)
    np.savez(prefix.with_suffix(".npz"), **{f"out{i}": v for i, v in enumerate(outputs)},
             **{f"probe{i}": v for i, v in enumerate(probe)})  # fmt: skip
    return {"paths": inputs.paths}


# ---------------------------------------------------------------- train_step on trusted inputs


class StepInputs:
    """The inputs a step is judged on, made here from the case's seed: the given model's state,
    a batch of random examples and a key; and a state whose hidden units are all off."""

    def __init__(self, sig: dict[str, Any], seed: int) -> None:
        import jax

        from .mesh import MeshSpec
        from .specs import multiprocess_training as given

        self.mesh = MeshSpec.parse(sig["mesh"]).build()
        state = given.init_state(seed)
        leaves, self.treedef = jax.tree.flatten(state)
        self.paths = list(training.flatten(state))
        self.state = [np.asarray(leaf) for leaf in leaves]
        # Hidden units that never fire: no dropout mask can matter, only the output bias learns.
        self.probe_state = [
            np.full_like(leaf, -100.0) if path == "params/hidden/bias/value" else leaf
            for path, leaf in zip(self.paths, self.state)
        ]
        rng = np.random.default_rng(seed)
        self.batch = {
            "x": rng.standard_normal((given.GLOBAL_BATCH, given.FEATURES), dtype=np.float32),
            "y": rng.integers(0, given.CLASSES, given.GLOBAL_BATCH).astype(np.int32),
        }
        self.key_seed = int(rng.integers(2**31))

    def args(self, leaves: list[np.ndarray], batch: dict[str, np.ndarray]) -> tuple[Any, ...]:
        import jax

        everywhere = jax.NamedSharding(self.mesh, jax.P())
        by_example = jax.NamedSharding(self.mesh, jax.P("data"))
        return (
            [jax.device_put(leaf, everywhere) for leaf in leaves],
            {name: jax.device_put(v, by_example) for name, v in batch.items()},
            jax.device_put(jax.random.key(self.key_seed), everywhere),
        )

    def run(self, call: Callable[..., Any], leaves: list[np.ndarray], batch: dict | None = None) -> list[np.ndarray]:
        """The new state's leaves and the loss, as NumPy."""
        import jax

        with jax.set_mesh(self.mesh):
            new_leaves, loss = call(*self.args(leaves, batch or self.batch))
        return [np.asarray(v) for v in (*new_leaves, loss)]

    def expected(self, call: Callable[..., Any]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """A reference step's outputs on the state, and on the state with its hidden units off."""
        return self.run(call, self.state), self.run(call, self.probe_state)

    def census(self, call: Callable[..., Any]) -> dict[str, Any]:
        """Collectives the program asks for, and those its compiled HLO runs."""
        import jax

        from .trace import hlo_census, stablehlo_collectives

        with jax.set_mesh(self.mesh):
            lowered = call.lower(*self.args(self.state, self.batch))
            compiled = lowered.compile()
        return {"asked": dict(stablehlo_collectives(lowered.as_text())), **hlo_census(compiled.as_text()).to_json()}

    def swapped(self, device: int) -> dict[str, np.ndarray]:
        """The batch with the examples of device 0 and ``device`` exchanged."""
        rows = len(self.batch["x"]) // self.mesh.size
        order = np.arange(len(self.batch["x"]))
        a, b = order[:rows].copy(), order[device * rows : (device + 1) * rows].copy()
        order[:rows], order[device * rows : (device + 1) * rows] = b, a
        return {name: v[order] for name, v in self.batch.items()}


def measure_step(
    call: Callable[..., Any], inputs: StepInputs, expected: list[np.ndarray], expected_probe: list[np.ndarray]
) -> dict[str, Any]:
    """Values, values when dropout plays no part, collectives and per-device masks of a step."""
    try:
        got = inputs.run(call, inputs.state)
        probe = inputs.run(call, inputs.probe_state)
        census = inputs.census(call)
    except Exception as err:  # the student's program failed at run time
        said = f": {str(err)[:300]}" if str(err) else ""
        return {"values": _fail(f"failed to run: {type(err).__name__}{said}")}
    problem = _leaves_problem(got, expected, inputs.state, inputs.paths)
    dropout_free = _leaves_problem(probe, expected_probe, inputs.probe_state, inputs.paths)
    if problem and not dropout_free:
        problem += ", yet the step is right when dropout plays no part: look at the dropout keys"
    return {
        "values": _fail(problem) if problem else _ok(),
        "dropout free": _fail(dropout_free) if dropout_free else _ok(),
        "census": census,
        "devices": inputs.mesh.size,
        "num_params": sum(leaf.size for path, leaf in zip(inputs.paths, inputs.state) if path.startswith("params/")),
        "same_masks": _devices_sharing_masks(call, inputs, got),
    }


def _devices_sharing_masks(call: Callable[..., Any], inputs: StepInputs, got: list[np.ndarray]) -> list[int]:
    """Devices d whose examples, swapped with device 0's, leave the update unchanged."""
    before = np.concatenate([v.ravel() for v in inputs.state])
    update = np.concatenate([v.ravel() for v in got[:-1]]) - before
    scale = float(np.abs(update).max()) or 1.0
    same = []
    for device in range(1, inputs.mesh.size):
        other = inputs.run(call, inputs.state, inputs.swapped(device))
        change = np.abs(np.concatenate([v.ravel() for v in other[:-1]]) - before - update).max()
        if change <= SAME_MASK * scale:
            same.append(device)
    return same


def _leaves_problem(got: list[np.ndarray], expected: list[np.ndarray], before: list[np.ndarray], paths: list[str]) -> str:
    """The first output that differs, parameters first; and, when every parameter moved by the
    same multiple of the reference's update, that multiple."""
    names = [*paths, "loss"]
    if len(got) != len(expected):
        return f"the step returned {len(got) - 1} state arrays and a loss; the state has {len(expected) - 1}"
    order = sorted(range(len(names)), key=lambda i: (not names[i].startswith("params/"), names[i] == "loss"))
    for i in order:
        g, e = got[i], expected[i]
        if g.shape != e.shape:
            return f"{names[i]} has shape {g.shape}, expected {e.shape}"
        if not np.allclose(g, e, rtol=TOLERANCE[0], atol=TOLERANCE[1], equal_nan=True):
            worst = float(np.nanmax(np.abs(np.asarray(g, np.float64) - e)))
            return f"after one step, {names[i]} differs from the reference's by up to {worst:.3g}{_ratio(got, expected, before, paths)}"
    return ""


def _ratio(got: list[np.ndarray], expected: list[np.ndarray], before: list[np.ndarray], paths: list[str]) -> str:
    params = [i for i, path in enumerate(paths) if path.startswith("params/")]
    mine = np.concatenate([(got[i] - before[i]).ravel() for i in params])
    theirs = np.concatenate([(expected[i] - before[i]).ravel() for i in params])
    size = float(theirs @ theirs)
    if size == 0:
        return ""
    k = float(mine @ theirs) / size  # the multiple that fits best, and how well it fits
    if abs(k - 1) > 0.1 and np.linalg.norm(mine - k * theirs) <= 1e-3 * np.linalg.norm(mine):
        return f"; every parameter moved {k:.3g} times as far as the reference's: are the gradients summed, not averaged?"
    return ""


def measure_artifact(test: dict[str, Any]) -> dict[str, Any]:
    """An exported ``train_step``: refused unless it is a pure array program for the task's mesh
    and state, else measured like any step."""
    import jax

    from .evaluate import ALLOWED_CUSTOM_CALLS, MAX_ARTIFACT_BYTES
    from .trace import custom_call_targets

    data = Path(test["artifact"]).read_bytes()
    if len(data) > MAX_ARTIFACT_BYTES:
        return {"values": _fail(f"artifact refused: {len(data)} bytes; the limit is {MAX_ARTIFACT_BYTES}")}
    try:
        exported = jax.export.deserialize(bytearray(data))
    except Exception as err:  # anything malformed is the sandbox's fault
        return {"values": _fail(f"artifact refused: it could not be read ({type(err).__name__})")}
    inputs = StepInputs(test["sig"], test["seed"])
    problems = []
    if exported.nr_devices != inputs.mesh.size or exported.disabled_safety_checks:
        problems.append(f"exported for {exported.nr_devices} devices or with safety checks off")
    calls = custom_call_targets(exported.mlir_module()) - ALLOWED_CUSTOM_CALLS
    if calls:
        problems.append(f"holds custom calls or host callbacks: {', '.join(sorted(calls))}")
    want = [(tuple(leaf.shape), str(leaf.dtype)) for leaf in inputs.state]
    got = [(tuple(a.shape), str(a.dtype)) for a in exported.in_avals][: len(want)]
    if got != want or len(exported.in_avals) != len(want) + 3:
        problems.append("its inputs are not the given state, a batch and a key")
    if problems:
        return {"values": _fail("artifact refused: " + "; ".join(problems))}
    with np.load(Path(test["reference"]).with_suffix(".npz"), allow_pickle=False) as saved:
        n = len(inputs.state) + 1
        expected = [saved[f"out{i}"] for i in range(n)]
        expected_probe = [saved[f"probe{i}"] for i in range(n)]
    return measure_step(jax.jit(exported.call), inputs, expected, expected_probe)


# ---------------------------------------------------------------- layouts


def measure_layout(test: dict[str, Any]) -> dict[str, Any]:
    """One layout's record, as the sandbox sent it, against the cached reference's."""
    reference = json.loads(Path(test["reference"]).with_suffix(".json").read_text())
    result = test["result"]
    return judge_layout(test["sig"], result.get("value") if isinstance(result, dict) else None, reference)


def judge_layout(sig: dict[str, Any], sent: Any, reference: dict[str, Any]) -> dict[str, Any]:
    """For ``make_global_batch`` or ``train``: one layout's record against the reference's."""
    reference = check_record(reference, sig["processes"])
    try:
        record = check_record(sent, sig["processes"])
    except RecordError as err:
        return {"values": _fail(f"the sandbox's record of this run is malformed: {err}")}
    if sig["function"] == "make_global_batch":
        problem = _batch_problem(record, reference)
    else:
        problem = _run_problem(record, reference, sig["num_steps"])
    return {"values": _fail(problem) if problem else _ok()}


def _batch_problem(record: dict[str, Any], reference: dict[str, Any]) -> str:
    for rank, (proc, ref) in enumerate(zip(record["processes"], reference["processes"])):
        batch, want = proc["batch"], ref["batch"]
        if batch is None:
            return f"process {rank} never got to build its batch: {record['message']}"
        if "error" in batch:
            return f"in process {rank}, make_global_batch raised {batch['error']}"
        for name, expected in want.items():
            problem = _array_problem(name, batch.get(name), expected)
            if problem:
                return f"in process {rank}, {problem}"
    return ""


def _array_problem(name: str, got: dict[str, Any] | None, want: dict[str, Any]) -> str:
    if got is None:
        return f"the global batch has no {name!r}"
    if "error" in got:
        return f"{name!r} {got['error']}"
    if got["shape"] != want["shape"] or got["dtype"] != want["dtype"]:
        return f"{name!r} is {got['dtype']}{got['shape']}, expected {want['dtype']}{want['shape']} (the global batch)"
    if got["spec"] != want["spec"]:
        return f"{name!r} is sharded {_spec(got['spec'])}, the task asks for {_spec(want['spec'])}"
    shards = {int(s[0]): s for s in got["shards"] if isinstance(s, list) and len(s) == 4}
    for device, start, stop, total in want["shards"]:
        mine = shards.get(device)
        if mine is None or mine[1:3] != [start, stop]:
            return f"device {device} should hold rows {start}-{stop - 1} of {name!r}"
        if not (isinstance(mine[3], (int, float)) and abs(mine[3] - total) <= 1e-4 * (1 + abs(total))):
            return f"device {device} holds other values in rows {start}-{stop - 1} of {name!r} than this process's data"
    return ""


def _spec(entries: list[Any]) -> str:
    return "P(" + ", ".join(repr(tuple(e)) if isinstance(e, list) else repr(e) for e in entries) + ")"


def _run_problem(record: dict[str, Any], reference: dict[str, Any], num_steps: int) -> str:
    if record["status"] != "ok":
        return record["message"]
    procs, ref = record["processes"], reference["processes"][0]
    for rank, proc in enumerate(procs):
        if proc["mesh"] != ref["mesh"] and rank == 0:
            return f"the run's mesh is {proc['mesh']}, the reference's {ref['mesh']}"
        if set(proc["params"]) != set(ref["params"]):
            return f"process {rank} returned parameters {sorted(proc['params'])}, expected {sorted(ref['params'])}"
        if rank and not all(np.array_equal(proc["params"][p], procs[0]["params"][p]) for p in ref["params"]):
            worst = max(float(np.abs(proc["params"][p] - procs[0]["params"][p]).max()) for p in ref["params"])
            return (f"process {rank}'s parameters differ from process 0's by up to {worst:.3g}: the copies "
                    "drifted apart (are the gradients averaged over 'data' before the update?)")  # fmt: skip
        if proc["losses"].shape != (num_steps,):
            return f"process {rank} returned {proc['losses'].size} losses for {num_steps} steps"
    for name, got, want in [("loss history", procs[0]["losses"], ref["losses"])] + [
        (f"parameter {p}", procs[0]["params"][p], ref["params"][p]) for p in sorted(ref["params"])
    ]:
        if got.shape != want.shape:
            return f"{name} has shape {got.shape}, expected {want.shape}"
        if not np.allclose(got, want, rtol=TOLERANCE[0], atol=TOLERANCE[1], equal_nan=True):
            worst = float(np.nanmax(np.abs(got - want)))
            return f"the {name} differs from the reference run's by up to {worst:.3g} (rtol={TOLERANCE[0]:g}, atol={TOLERANCE[1]:g})"
    return ""


# ---------------------------------------------------------------- scores


def measure(test: dict[str, Any]) -> dict[str, Any]:
    if test.get("failure"):
        return {"values": _fail(test["failure"])}
    if test["sig"]["kind"] == "train_step":
        return measure_artifact(test)
    return measure_layout(test)


def score(task: Task, measured: Measured) -> list[TestResult]:
    """Points per part: one per layout for the layout tasks; values, collectives and dropout for
    ``train_step``."""
    if task.kind == "train_step":
        parts = {part: _step_problem(part, [m for _, m in measured]) for part in task.points}
        hidden: set[str] = set()
    else:
        by_part = {training.layout_label(*c.args): (c, m) for c, m in measured}
        parts = {part: _layout_note(by_part[part][1]) for part in task.points if part in by_part}
        hidden = {part for part, (c, _) in by_part.items() if c.hidden}
    return [
        TestResult(f"{task.name}: {part}", task.grade_id, 0.0 if problem else task.points[part],
                   task.points[part], "failed" if problem else "passed", problem,
                   "hidden" if part in hidden else "visible")
        for part, problem in parts.items()
    ]  # fmt: skip


def _layout_note(measurement: dict[str, Any]) -> str:
    return "" if measurement["values"]["ok"] else measurement["values"]["message"]


def _step_problem(part: str, measurements: list[dict[str, Any]]) -> str:
    for m in measurements:
        if part == "values" and not m["values"]["ok"]:
            return m["values"]["message"]
        if part == "values":
            continue
        if "dropout free" not in m or not m["dropout free"]["ok"]:
            why = m.get("dropout free", m["values"])["message"]
            return f"not checked until the step is right when dropout plays no part ({why})"
        problem = _collectives_problem(m) if part == "collectives" else _dropout_problem(m)
        if problem:
            return problem
    return ""


def _collectives_problem(m: dict[str, Any]) -> str:
    census, n, devices = m["census"], m["num_params"], m["devices"]
    ops = {op for op, k in {**census["asked"], **census["counts"]}.items() if k and op != "all-reduce"}
    if ops:
        return (f"the program uses {', '.join(sorted(ops))}; averaging gradients needs only an "
                "all-reduce (psum or pmean over 'data'), and no gathered parameters")  # fmt: skip
    reduces = census["counts"].get("all-reduce", 0)
    if reduces > 1:
        return f"the compiled step runs {reduces} all-reduces; the gradients and the loss fit in one (pmean a tuple)"
    per_value = 2 * (devices - 1) / devices  # what an all-reduce sends per device, per value
    sent = census["values_per_device"] or 0.0
    if sent < per_value * n - 1e-6:
        return f"the all-reduce carries {sent:g} values per device; averaging all {n} gradients sends at least {per_value * n:g}"
    if sent > per_value * (n + 1) + 1e-6:
        return f"sends {sent:g} values per device; one all-reduce of the {n} gradients and the loss sends {per_value * (n + 1):g}"
    return ""


def _dropout_problem(m: dict[str, Any]) -> str:
    same = m["same_masks"]
    if not same:
        return ""
    devices = ", ".join(map(str, same))
    return (f"device 0 and device{'s' if len(same) > 1 else ''} {devices} draw the same dropout mask: swapping "
            "their examples leaves the update unchanged; fold the device's index along 'data' into the key")  # fmt: skip


def _ok() -> dict[str, Any]:
    return {"ok": True, "message": ""}


def _fail(message: str) -> dict[str, Any]:
    return {"ok": False, "message": message}


# ---------------------------------------------------------------- notebooks' self-checks

_REFERENCE_RUNS: dict[int, training.LayoutRuns] = {}  # per reference lookup: oracle runs are reused


def self_check(task: Task, cases: tuple[Case, ...], fn: Callable[..., Any], lookup: training.Lookup,
               seed: Callable[[Case], int]) -> Measured:  # fmt: skip
    """Measure a notebook's function as the grader does, against ``lookup``'s references; the
    other graded functions come from the notebook's namespace."""
    if task.kind == "train_step":
        return [(case, _check_step(fn, case, lookup, seed(case))) for case in cases]
    namespace = getattr(fn, "__globals__", {})
    student = training.LayoutRuns(
        lambda name: fn if name == task.name else training.namespace_lookup(namespace)(name)
    )
    reference = _REFERENCE_RUNS.setdefault(id(lookup), training.LayoutRuns(lookup))
    measured = []
    for case in cases:
        sig = training.signature(task, case)
        measured.append((case, judge_layout(sig, student.run(sig), reference.run(sig))))
    return measured


def _check_step(fn: Callable[..., Any], case: Case, lookup: training.Lookup, seed: int) -> dict[str, Any]:
    import jax

    inputs = StepInputs({"mesh": case.mesh}, seed)
    expected, probe = inputs.expected(jax.jit(training.flat_step(lookup("train_step"), inputs.treedef)))
    return measure_step(jax.jit(training.flat_step(fn, inputs.treedef)), inputs, expected, probe)
