"""The training kind: run a training assignment's ``make_global_batch`` and ``train`` in several
process layouts (the step is exported by ``train_step.py``).

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..core import pspec
from ..core.files import write_atomic
from ..core.mesh import mesh_signature
from ..core.records import LayoutSig, StepSig
from ..core.tasks import Case, Task, Training, case_seed

_ERROR_LINE = re.compile(r"^\[process \d+\] ((?:[\w.]+(?:Error|Exception)|NotImplementedError): .*)$", re.M)
STEP_FILE = "{rank}.step"  # the last step whose data a process asked for
PROBE_FILE = "{rank}.batch.json"  # what make_global_batch built, written before training starts

Lookup = Callable[[str], Callable[..., Any] | None]
REPORTS_MESH = False


# ---------------------------------------------------------------- signatures


def signature(task: Task, case: Case, assignment: str = "", salt: str = "") -> LayoutSig:
    """A layout case as plain data: processes and devices each (``args``), the run's ``kwargs``
    (num_steps, timeout), and what is drawn for the run from the grader's ``salt``: its seed, and
    how many batches each process's data holds. Both are the same for every task judged on the
    layout (its functions are judged on one run), and the counts are drawn apart from the seed,
    so that a process told the seed still cannot compute another process's count."""
    processes, devices = case.args
    run = dict(case.kwargs)
    seed = case_seed(assignment, "layout", case, salt)
    held = held_batches(case_seed(assignment, "held batches", case, salt), processes, run["num_steps"])
    return {
        "kind": "training",
        "function": task.name,
        "assignment": assignment,
        "processes": processes,
        "devices": devices,
        "num_steps": run["num_steps"],
        "seed": seed,
        "held": held,
        "timeout": run["timeout"],
    }


def held_batches(seed: int, processes: int, num_steps: int) -> list[int]:
    """How many batches each process's data holds: some process runs out before ``num_steps``,
    and with several processes not all hold as many, so they must agree on the number of steps."""
    rng = np.random.default_rng(seed)
    low, high = num_steps - 3, num_steps + 1
    held = [int(n) for n in rng.integers(low, high + 1, processes)]
    short = int(rng.integers(processes))
    held[short] = int(rng.integers(low, num_steps))
    if processes > 1 and len(set(held)) == 1:
        held[(short + 1) % processes] = high
    return held


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
        jax.tree_util.keystr(path, simple=True, separator="/"): leaf for path, leaf in jax.tree.leaves_with_path(tree)
    }


# ---------------------------------------------------------------- one layout, inside each process


def _describe_batch(batch: Any) -> dict[str, Any]:
    """Global shape, sharding and each local shard (device, rows, checksum) of every array."""
    import jax

    described: dict[str, Any] = {}
    for name, x in flatten(batch).items():
        if not isinstance(x, jax.Array):
            described[name] = {"error": f"is a {type(x).__name__}, not a jax.Array"}
            continue
        shards = [
            [
                int(s.device.id),
                s.index[0].start or 0,
                s.index[0].stop or x.shape[0],
                float(np.asarray(s.data, np.float64).sum()),
            ]
            for s in sorted(x.addressable_shards, key=lambda s: s.device.id)
        ]
        described[name] = {
            "shape": list(x.shape),
            "dtype": str(x.dtype),
            "shards": shards,
            "spec": pspec.of_array(x),
        }
    return described


def _process_run(
    given: Training,
    functions: dict[str, Callable[..., Any] | None],
    num_steps: int,
    seed: int,
    held: list[int],
    tmp: str,
) -> dict[str, Any] | None:
    """What every process of a layout runs: tell it how much data it holds, describe the global
    batch, then train."""
    import jax

    rank = jax.process_index()
    given.hold_batches(held[rank])
    del held[:]  # the other processes' counts are theirs: nothing this process runs can read them
    mesh = given.data_mesh()
    build_batch, train = functions.get(given.batch_function), functions.get(given.train_function)
    try:
        if build_batch is None:
            raise NameError(f"no function named {given.batch_function} was defined")
        probe = _describe_batch(build_batch(given.local_batch(0, seed), mesh))
    except Exception as err:  # the batch is judged on its own; training still runs
        probe = {"error": f"{type(err).__name__}: {str(err)[:300]}"}
    write_atomic(Path(tmp, PROBE_FILE.format(rank=rank)), json.dumps(probe))
    if train is None:
        return None
    globals_ = getattr(train, "__globals__", {})
    if globals_.get("local_batch") is given.local_batch:  # count the steps, to place a hang
        step_file = Path(tmp, STEP_FILE.format(rank=rank))

        def counted(step: int, seed: int) -> Any:
            write_atomic(step_file, str(step))  # a process killed mid-write leaves the last whole count
            return given.local_batch(step, seed)

        globals_["local_batch"] = counted
    result = train(num_steps, seed)
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(f"{given.train_function} must return (params, losses), not {type(result).__name__}")
    params, losses = result
    return {
        "params": flatten(params),
        "losses": np.asarray([np.asarray(loss) for loss in losses], np.float32),
        "mesh": mesh_signature(mesh),
    }


def run_layout(given: Training, functions: dict[str, Callable[..., Any] | None], sig: LayoutSig) -> dict[str, Any]:
    """Run one layout with the launcher; its outcome as plain JSON, whatever went wrong. Without
    a ``train`` the processes only build their batches."""
    from .launcher import launch
    from .reports import LaunchError

    _send_by_value(fn for fn in functions.values() if fn is not None)
    n, steps = sig["processes"], sig["num_steps"]
    output = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="jaxcourse-train-") as tmp:
        try:
            run = (given, functions, steps, sig["seed"], list(sig["held"]), tmp)
            results = launch(_process_run, n, sig["devices"], args=run, timeout=sig["timeout"], out=output)
            status, message = "ok", ""
            if functions.get(given.train_function) is None:
                status, message = "failed", f"no function named {given.train_function} was defined"
        except LaunchError as err:
            results, status = [None] * n, "hang" if "hung" in str(err) else "failed"
            message = f"{err}{_steps_begun(Path(tmp), n, steps, status == 'hang')}{_last_error(output.getvalue())}"
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


def _steps_begun(tmp: Path, n: int, steps: int, hung: bool) -> str:
    """Which step each process had reached, as the number of batches it asked for; where a group
    hung with the processes at different steps, the hazard that makes it hang so."""
    begun, reached = [], set()
    for rank in range(n):
        path = tmp / STEP_FILE.format(rank=rank)
        step = int(path.read_text()) + 1 if path.is_file() else 0
        reached.add(step)
        begun.append(f"process {rank} began " + (f"step {step} of {steps}" if step else "no step"))
    hazard = LAST_BATCH if hung and len(reached) > 1 else ""
    return "; " + ", ".join(begun) + hazard


LAST_BATCH = (
    ": the processes ran different numbers of steps, and the first step one of them never began waits for it "
    "for ever (the last-batch hazard: agree on the number of steps before the loop)"
)


def given_for(sig: LayoutSig | StepSig) -> Training:
    """The training setup of the assignment a training signature belongs to."""
    from ..specs import get

    return get(sig["assignment"]).task(sig["function"]).given()


class LayoutRuns:
    """Runs each layout once: ``make_global_batch`` and ``train`` are judged on the same run.

    Once ``train`` has hung in one layout, the later layouts build their batches only (seconds)
    and report the same hang: a group that never ends costs one time limit, not one per layout."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.done: dict[tuple[Any, ...], dict[str, Any]] = {}

    def run(self, sig: LayoutSig) -> dict[str, Any]:
        key = (sig["assignment"], sig["processes"], sig["devices"], sig["num_steps"], sig["seed"], *sig["held"])
        if key not in self.done:
            given = given_for(sig)
            functions = {name: self.lookup(name) for name in given.layout_functions}
            hung = next((r for r in self.done.values() if r["status"] == "hang"), None)
            if hung is None or functions.get(given.train_function) is None:
                self.done[key] = run_layout(given, functions, sig)
            else:
                batches_only = run_layout(given, {**functions, given.train_function: None}, sig)
                message = f"not trained in this layout, as {given.train_function} hung in another: {hung['message']}"
                self.done[key] = {**batches_only, "status": "hang", "message": message}
        return self.done[key]


RUNS = "__jaxcourse_layout_runs__"  # where a namespace keeps its layouts' runs


def in_sandbox(fn: Callable[..., Any], sig: LayoutSig, namespace: dict[str, Any]) -> dict[str, Any]:
    """The runner's entry: one layout of the notebook's functions, run once for every task that
    is judged on it (the runs are kept in the namespace they were run from); plain JSON, judged
    on the trusted side."""
    runs = namespace.setdefault(RUNS, LayoutRuns(namespace_lookup(namespace)))
    return {"value": runs.run(sig)}


def namespace_lookup(namespace: dict[str, Any]) -> Lookup:
    """A notebook's function by name, or None where it defined none."""

    def lookup(name: str) -> Callable[..., Any] | None:
        fn = namespace.get(name)
        return fn if callable(fn) else None

    return lookup
