"""The untrusted side: run a student's cells, then export each graded function per signature.

Runs inside the sandbox, never in the grader's process. It writes plain data only: JSON, and the
exported artifacts (array programs, no Python) as byte arrays in one ``.npz``. Scores are decided
elsewhere, on inputs this process never sees.

    python -m autograder.untrusted.runner CELLS_JSON PLAN_JSON OUT_DIR

Only ``core``, ``specs``, ``harness`` and this folder are in the sandbox: the code that decides
scores is not there to be read or patched. The hidden cases come last, and only once the grader
has sealed what this process wrote of the visible ones (``core/protocol.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.files import write_atomic
from ..core.mlir_context import share_per_thread
from ..core.profile import Stopwatch
from ..core.protocol import (
    ARTIFACTS,
    HIDDEN_ARTIFACTS,
    HIDDEN_PLAN,
    HIDDEN_RESULTS,
    RESULTS,
    VERSION,
    CallResult,
    Cell,
    NotebookRun,
    PlannedCall,
    Results,
)
from ..core.quick_compile import runner_flags
from ..core.records import Signature


class TestTimeout(BaseException):
    """A single test ran past its time limit. Not an ``Exception``: a student's ``except
    Exception`` (or a plain-Python task's "which exception did it raise") must not swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """A limit for the call inside, by SIGALRM: only the main thread can have one (a notebook's
    own check from another thread goes unlimited, as the rest of that thread's code does)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TestTimeout(f"took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _NoShell:
    """Stands in for IPython's shell: magics and shell escapes do nothing when graded."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _python_source(cell: str) -> str:
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell)


def run_cells(cells: list[Cell], namespace: dict[str, Any], keep_going: bool = False) -> NotebookRun:
    """Execute the notebook's code cells in order; report the first one that raises (or, with
    ``keep_going``, run the rest regardless)."""
    namespace.update(get_ipython=_NoShell, display=lambda *a, **k: None)
    for index, cell in enumerate(cells):
        label = cell.get("grade_id") or f"code cell {index + 1}"
        try:
            exec(_compiled(cell["source"], f"<{label}>"), namespace)
        except BaseException as err:  # the student's code may raise anything, SystemExit too
            if isinstance(err, KeyboardInterrupt):
                raise
            if not keep_going:
                return {"status": "error", "message": f"{label} raised {_describe(err)}"}
    return {"status": "ok", "message": ""}


def _compiled(source: str, filename: str) -> Any:
    """A cell's code. IPython's syntax (magics, shell escapes) is not Python, so a cell that
    compiles as it is needs no transforming, and most runs never import IPython."""
    try:
        return compile(source, filename, "exec")
    except SyntaxError:
        return compile(_python_source(source), filename, "exec")


def _describe(err: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename.startswith("<")]
    where = f" at line {frames[-1].lineno}" if frames else ""
    return f"{type(err).__name__}{where}: {str(err)[:400]}"


def run_test(test: PlannedCall, namespace: dict[str, Any], artifacts: dict[str, bytes]) -> CallResult:
    """One planned call: the kind's own sandbox step (export, or a plain value) on the notebook's
    function, under the call's time limit."""
    from ..harness.calls import CALLS
    from ..harness.shard_map import OutputShardingError

    sig = test["sig"]
    fn = namespace.get(sig["function"])
    if not callable(fn):
        return {"status": "missing", "message": f"no function named {sig['function']} was defined"}
    try:
        with time_limit(test["timeout"]):
            got = CALLS[sig["kind"]].in_sandbox(fn, sig, namespace)
    except TestTimeout as err:
        return {"status": "timeout", "message": f"{sig['function']} {err}"}
    except Exception as err:  # whatever the student's code raised while being traced
        failed: CallResult = {"status": "error", "message": f"{sig['function']} raised {_describe(err)}"}
        return {**failed, "varying": err.varying} if isinstance(err, OutputShardingError) else failed
    if not isinstance(got, bytes):
        return {"status": "value", "result": got}
    name = f"{test['index']:03d}"
    artifacts[name] = got
    return {"status": "exported", "artifact": name}


def run_tests(
    planned: list[PlannedCall],
    namespace: dict[str, Any],
    artifacts: dict[str, bytes],
    watch: Stopwatch | None = None,
    timed_out: dict[str, CallResult] | None = None,
) -> dict[str, CallResult]:
    """Every planned call, in order. A function that ran out of time once (``timed_out``, by
    function, kept across calls) is not called again: its remaining cases fail at once with the
    same reason, so an endless loop costs one limit."""
    results: dict[str, CallResult] = {}
    timed_out = {} if timed_out is None else timed_out
    watch = watch or Stopwatch()
    for test in planned:
        function = test["sig"]["function"]
        with watch.phase(f"export {function}"):
            results[test["id"]] = timed_out.get(function) or run_test(test, namespace, artifacts)
        if results[test["id"]]["status"] == "timeout":
            timed_out[function] = results[test["id"]]
    return results


def mesh_signatures(sigs: list[Signature]) -> dict[str, Any]:
    """The meshes the exports ran on, for the trusted side's same-mesh check."""
    from ..core.mesh import MeshSpec, mesh_signature
    from ..harness.calls import CALLS

    names = {sig["mesh"] for sig in sigs if CALLS[sig["kind"]].REPORTS_MESH and "mesh" in sig}
    return {name: mesh_signature(MeshSpec.parse(name).build()) for name in sorted(names)}


# What a warm server imports once before it forks, so that no child imports it again: what every
# run imports (JAX, the harness), the course's modules the assignments' notebooks import, and what
# JAX imports only when a cell first needs it: MHLO's dialect (a lowering's text) and, where it is
# installed, rich (`jax.debug.visualize_array_sharding`). Each child imported these for about 0.1 s.
WARM_IMPORTS = (
    "jax",
    "jax.numpy",
    "numpy",
    "autograder.harness.calls",
    "autograder.checks",
    "autograder.mesh",
    "autograder.trace",
    "jaxlib.mlir.dialects.mhlo",
)
WARM_IF_INSTALLED = ("rich.align", "rich.box", "rich.console", "rich.padding", "rich.style", "rich.table")


def main(argv: list[str]) -> int:
    os.environ["XLA_FLAGS"] = runner_flags()  # before JAX starts: the quick compiles its XLA knows
    entered_at, watch = time.time(), Stopwatch()
    cells_path, plan_path, out_dir = argv
    out = Path(out_dir)
    cells = json.loads(Path(cells_path).read_text())
    plan = json.loads(Path(plan_path).read_text())

    with watch.phase("import jax"):
        import jax

        from ..core.mesh import use_cpu_devices

        use_cpu_devices(plan["num_devices"])
    share_per_thread()  # the cells' lowerings and the exports reuse MLIR contexts (core/mlir_context.py)
    # An artifact is the computation alone: no file names or line numbers in its locations, so
    # the same computation written two ways (comments, blank lines, names) is one program, which
    # the trusted side measures and compiles once for the whole class.
    jax.config.update("jax_traceback_in_locations_limit", 0)
    os.environ.setdefault("MPLBACKEND", "Agg")
    # The class's compile cache is read-only: a program not in it is compiled and not kept.
    warnings.filterwarnings("ignore", message="Error writing persistent compilation cache entry")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with watch.phase("run the cells"):
        notebook = run_cells(cells, namespace, plan.get("keep_going", False))
    timed_out: dict[str, CallResult] = {}
    results, artifacts = _phase(plan["tests"], notebook, namespace, watch, timed_out)
    write_results(out, {**results, "profile": {"entered_at": entered_at, "seconds": watch.seconds}}, artifacts)
    if notebook["status"] == "ok" and plan.get("hidden_wait"):
        hidden = _hidden_plan(Path(plan_path).parent / HIDDEN_PLAN, plan["hidden_wait"])
        if hidden:
            results, artifacts = _phase(hidden, notebook, namespace, watch, timed_out)
            write_results(out, results, artifacts, (HIDDEN_RESULTS, HIDDEN_ARTIFACTS))
    return 0


def _phase(
    planned: list[PlannedCall],
    notebook: NotebookRun,
    namespace: dict[str, Any],
    watch: Stopwatch,
    timed_out: dict[str, CallResult],
) -> tuple[Results, dict[str, bytes]]:
    """One phase's results (its calls, if the notebook ran) and the artifacts they name."""
    tests: dict[str, CallResult] = {}
    meshes: dict[str, Any] = {}
    artifacts: dict[str, bytes] = {}
    if notebook["status"] == "ok":
        tests = run_tests(planned, namespace, artifacts, watch, timed_out)
        meshes = mesh_signatures([t["sig"] for t in planned])
    results: Results = {"version": VERSION, "notebook": notebook, "meshes": meshes, "tests": tests}
    return results, artifacts


def _hidden_plan(path: Path, wait: float) -> list[PlannedCall]:
    """The hidden cases, once the grader has written them (it does as soon as it has sealed the
    visible ones); none if it does not within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while not path.is_file():
        if time.monotonic() > deadline:
            return []
        time.sleep(0.01)
    tests: list[PlannedCall] = json.loads(path.read_text())["tests"]
    return tests


def write_results(
    out: Path, results: Results, artifacts: dict[str, bytes], names: tuple[str, str] = (RESULTS, ARTIFACTS)
) -> None:
    """Artifacts first, results last: a results file means everything it names is written
    (``names``: one phase's results and artifacts files)."""
    import numpy as np

    results_name, artifacts_name = names
    arrays = {name: np.frombuffer(data, dtype=np.uint8) for name, data in artifacts.items()}
    with open(out / artifacts_name, "wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]  # keys are artifact names, never savez's allow_pickle
    write_atomic(out / results_name, json.dumps(results))


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Everything is written; tearing down JAX's runtime and the notebook's objects would only
    # keep the sandbox alive longer.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
