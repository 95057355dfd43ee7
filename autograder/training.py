"""Training tasks, the untrusted side: run a submission's ``train`` in several process layouts
and export its ``train_step``.

A layout run starts ``num_processes x devices_per_process`` processes with the course launcher
(the same global mesh of 8 devices every time); each process first describes the global batch
that ``make_global_batch`` builds, then trains, and hands back its final parameters, its loss
history and the mesh it ran on. Inside the sandbox the launcher passes results between its own
processes with cloudpickle; what leaves the sandbox is plain JSON (arrays as dtype, shape and a
flat list of numbers, a few thousand values per process), which the trusted side validates
before it decides any score.
``train_step`` travels as a ``jax.export`` artifact of a flat wrapper (a list of state leaves,
the batch and a key in; the new leaves and the loss out), so the trusted side can run it on
inputs the sandbox never saw and read its collectives from the compiled program.

The same code runs the reference, in the trusted worker, so both sides are judged alike.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
from math import prod
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .mesh import MeshSpec
from .tasks import Case, Task

_ERROR_LINE = re.compile(r"^\[process \d+\] ((?:[\w.]+(?:Error|Exception)|NotImplementedError): .*)$", re.M)
KINDS = frozenset({"training", "train_step"})
LAYOUT_FUNCTIONS = ("make_global_batch", "train")  # what a layout run calls
STEP_FILE = "{rank}.step"  # the last step whose data a process asked for
PROBE_FILE = "{rank}.batch.json"  # what make_global_batch built, written before training starts

Lookup = Callable[[str], Callable[..., Any] | None]


# ---------------------------------------------------------------- signatures


def signature(task: Task, case: Case) -> dict[str, Any]:
    """A training case as plain data: a layout (``args``: processes, devices each) and the run's
    ``kwargs``, or the mesh that ``train_step`` is exported for."""
    if task.kind == "train_step":
        return {"kind": "train_step", "function": task.name, "mesh": case.mesh}
    processes, devices = case.args
    return {"kind": "training", "function": task.name, "processes": processes, "devices": devices,
            **dict(case.kwargs)}  # fmt: skip


def layout_label(processes: int, devices: int) -> str:
    return f"{processes} process{'es' if processes > 1 else ''} x {devices} devices"


# ---------------------------------------------------------------- arrays as JSON


def encode(value: Any) -> dict[str, Any]:
    array = np.asarray(value)
    return {"dtype": str(array.dtype), "shape": list(array.shape), "data": array.ravel().tolist()}


def flatten(tree: Any) -> dict[str, Any]:
    """``{path: array}`` of a pytree, paths such as ``hidden/kernel/value``."""
    import jax

    return {
        jax.tree_util.keystr(path, simple=True, separator="/"): leaf
        for path, leaf in jax.tree.leaves_with_path(tree)
    }


# ---------------------------------------------------------------- one layout, inside each process


def _describe_batch(batch: Any) -> dict[str, Any]:
    """Global shape, sharding and each local shard (device, rows, checksum) of every array."""
    import jax

    from .harness import spec_to_json
    from .measure import normalize_spec

    described = {}
    for name, x in flatten(batch).items():
        if not isinstance(x, jax.Array):
            described[name] = {"error": f"is a {type(x).__name__}, not a jax.Array"}
            continue
        spec = getattr(x.sharding, "spec", None)
        shards = [
            [int(s.device.id), s.index[0].start or 0, s.index[0].stop or x.shape[0],
             float(np.asarray(s.data, np.float64).sum())]
            for s in sorted(x.addressable_shards, key=lambda s: s.device.id)
        ]  # fmt: skip
        described[name] = {
            "shape": list(x.shape), "dtype": str(x.dtype), "shards": shards,
            "spec": None if spec is None else normalize_spec(spec_to_json(tuple(spec)), x.ndim),
        }  # fmt: skip
    return described


def _process_run(functions: dict[str, Callable[..., Any] | None], num_steps: int, seed: int, tmp: str) -> dict | None:
    """What every process of a layout runs: describe the global batch, then train."""
    import jax

    from .mesh import signature as mesh_signature
    from .specs import multiprocess_training as given

    rank = jax.process_index()
    mesh = given.data_mesh()
    make_global_batch, train = (functions.get(name) for name in LAYOUT_FUNCTIONS)
    try:
        if make_global_batch is None:
            raise NameError("no function named make_global_batch was defined")
        probe = _describe_batch(make_global_batch(given.local_batch(0, seed), mesh))
    except Exception as err:  # make_global_batch is judged on its own; training still runs
        probe = {"error": f"{type(err).__name__}: {str(err)[:300]}"}
    Path(tmp, PROBE_FILE.format(rank=rank)).write_text(json.dumps(probe))
    if train is None:
        return None
    globals_ = getattr(train, "__globals__", {})
    if globals_.get("local_batch") is given.local_batch:  # count the steps, to place a hang
        step_file = Path(tmp, STEP_FILE.format(rank=rank))

        def counted(step: int, seed: int) -> Any:
            step_file.write_text(str(step))
            return given.local_batch(step, seed)

        globals_["local_batch"] = counted
    result = train(num_steps, seed)
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(f"train must return (params, losses), not {type(result).__name__}")
    params, losses = result
    return {
        "params": flatten(params),
        "losses": np.asarray([np.asarray(loss) for loss in losses], np.float32),
        "mesh": mesh_signature(mesh),
    }


def run_layout(functions: dict[str, Callable[..., Any] | None], sig: dict[str, Any]) -> dict[str, Any]:
    """Run one layout with the launcher; its outcome as plain JSON, whatever went wrong. Without
    a ``train`` the processes only build their batches."""
    from .launch import LaunchError, launch

    _send_by_value(fn for fn in functions.values() if fn is not None)
    n, steps = sig["processes"], sig["num_steps"]
    output = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="jaxcourse-train-") as tmp:
        try:
            results = launch(_process_run, n, sig["devices"], args=(functions, steps, sig["seed"], tmp),
                             timeout=sig["timeout"], out=output)  # fmt: skip
            status, message = "ok", ""
            if functions.get("train") is None:
                status, message = "failed", "no function named train was defined"
        except LaunchError as err:
            results, status = [None] * n, "hang" if "hung" in str(err) else "failed"
            message = f"{err}{_steps_begun(Path(tmp), n, steps)}{_last_error(output.getvalue())}"
        processes = [_process_record(Path(tmp), rank, result) for rank, result in enumerate(results)]
    return {"status": status, "message": message, "processes": processes}


def _send_by_value(functions: Any) -> None:
    """The instructor's solutions are imported from the course checkout, which the launched
    processes cannot import: their functions travel by value, as a notebook's do."""
    import sys

    import cloudpickle

    for fn in functions:
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        if module is not None and module.__name__.split(".")[0] == "solutions":
            cloudpickle.register_pickle_by_value(module)


def _process_record(tmp: Path, rank: int, result: dict[str, Any] | None) -> dict[str, Any]:
    probe_file = tmp / PROBE_FILE.format(rank=rank)
    record: dict[str, Any] = {"batch": json.loads(probe_file.read_text()) if probe_file.is_file() else None}
    if result is not None:
        record["params"] = {path: encode(leaf) for path, leaf in result["params"].items()}
        record["losses"] = encode(result["losses"])
        record["mesh"] = result["mesh"]
    return record


def _last_error(output: str) -> str:
    """The exception a process printed last: the launcher names the process, this says why."""
    errors = _ERROR_LINE.findall(output)
    return f"; the error: {errors[-1][:400]}" if errors else ""


def _steps_begun(tmp: Path, n: int, steps: int) -> str:
    """Which step each process had reached, as the number of batches it asked for."""
    begun = []
    for rank in range(n):
        path = tmp / STEP_FILE.format(rank=rank)
        reached = f"step {int(path.read_text()) + 1} of {steps}" if path.is_file() else "no step"
        begun.append(f"process {rank} began {reached}")
    return "; " + ", ".join(begun)


class LayoutRuns:
    """Runs each layout once: ``make_global_batch`` and ``train`` are judged on the same run."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.done: dict[tuple[int, int, int, int], dict[str, Any]] = {}

    def run(self, sig: dict[str, Any]) -> dict[str, Any]:
        key = (sig["processes"], sig["devices"], sig["num_steps"], sig["seed"])
        if key not in self.done:
            self.done[key] = run_layout({name: self.lookup(name) for name in LAYOUT_FUNCTIONS}, sig)
        return self.done[key]


_SANDBOX_RUNS: dict[int, LayoutRuns] = {}


def sandbox_run(sig: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    """The runner's entry: one layout of the notebook's functions, run once for both tasks."""
    runs = _SANDBOX_RUNS.setdefault(id(namespace), LayoutRuns(namespace_lookup(namespace)))
    return runs.run(sig)


def namespace_lookup(namespace: dict[str, Any]) -> Lookup:
    """A notebook's function by name, or None where it defined none."""

    def lookup(name: str) -> Callable[..., Any] | None:
        fn = namespace.get(name)
        return fn if callable(fn) else None

    return lookup


# ---------------------------------------------------------------- train_step as an array program


def step_inputs_structs(mesh: Any) -> tuple[Any, list[Any], dict[str, Any], Any]:
    """The state's tree, and abstract leaves, batch and key for exporting ``train_step``."""
    import jax

    from .specs import multiprocess_training as given

    leaves, treedef = jax.tree.flatten(given.init_state(0))
    everywhere, by_example = jax.NamedSharding(mesh, jax.P()), jax.NamedSharding(mesh, jax.P("data"))
    structs = [jax.ShapeDtypeStruct(np.shape(leaf), leaf.dtype, sharding=everywhere) for leaf in leaves]
    batch = {
        "x": jax.ShapeDtypeStruct((given.GLOBAL_BATCH, given.FEATURES), np.float32, sharding=by_example),
        "y": jax.ShapeDtypeStruct((given.GLOBAL_BATCH,), np.int32, sharding=by_example),
    }
    key = jax.ShapeDtypeStruct((), jax.random.key(0).dtype, sharding=everywhere)
    return treedef, structs, batch, key


def flat_step(train_step: Callable[..., Any], treedef: Any) -> Callable[..., Any]:
    """``train_step`` on a flat list of state leaves: a signature any side can rebuild."""
    import jax

    def step(leaves: list[Any], batch: dict[str, Any], key: Any) -> tuple[list[Any], Any]:
        state, loss = train_step(jax.tree.unflatten(treedef, leaves), batch, key)
        return jax.tree.leaves(state), loss

    return step


def export_step(train_step: Callable[..., Any], sig: dict[str, Any]) -> bytes:
    """Serialized ``jax.export`` of the jitted flat step on the task's mesh."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    treedef, structs, batch, key = step_inputs_structs(mesh)
    with jax.set_mesh(mesh):
        exported = jax.export.export(jax.jit(flat_step(train_step, treedef)))(structs, batch, key)
    return bytes(exported.serialize())


def num_values(shapes: list[tuple[int, ...]]) -> int:
    return sum(prod(s) for s in shapes)
