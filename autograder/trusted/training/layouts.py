"""The training kind, trusted half: ``make_global_batch`` and ``train`` judged per layout
(processes x devices each, always the same global mesh) against the reference run in the same
layout: the global batch's shape, sharding and the rows on each device; the run finishing (a hang
or a crash is reported by process and step); every process holding the same parameters and loss
history, as many steps long as the reference's (the processes' data differ in length, so they
must agree on it); the parameters and the loss history within ``TOLERANCE`` of the reference's."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ...core import pspec
from ...core.records import LayoutSig, Measurement, TestResult, Verdict, fail, ok
from ...core.tasks import Task
from ...harness import layouts as harness
from .. import reference
from ..jobs import Evaluation, Measured, ReferenceJob, References
from ..verdict import part_result
from .records import TOLERANCE, RecordError, check_record


def reference_record(job: ReferenceJob, refs: References) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    sig = cast(LayoutSig, job["sig"])  # this module is handed only its own kind
    record = refs.layouts.run(sig)
    if record["status"] != "ok":
        where = harness.layout_label(sig["processes"], sig["devices"])
        raise RuntimeError(f"the reference run failed in {where}: {record['message']}")
    return record, {}


def measure(test: Evaluation) -> Measurement:
    """One layout's record, as the sandbox sent it, against the cached reference's."""
    if test.get("failure"):
        return {"values": fail(test["failure"])}
    expected, _ = reference.load(test["reference"])
    result = test["result"]
    sent = result.get("value") if isinstance(result, dict) else None
    return {"values": judge(cast(LayoutSig, test["sig"]), sent, expected)}


def judge(sig: LayoutSig, sent: Any, expected: dict[str, Any]) -> Verdict:
    """For ``make_global_batch`` or ``train``: one layout's record against the reference's."""
    want = check_record(expected, sig["processes"])
    try:
        record = check_record(sent, sig["processes"])
    except RecordError as err:
        return fail(f"the sandbox's record of this run is malformed: {err}")
    given = harness.given_for(sig)
    if sig["function"] == given.batch_function:
        problem = _batch_problem(record, want, given.batch_function)
    else:
        problem = _run_problem(record, want, sig["num_steps"])
    return fail(problem) if problem else ok()


def _batch_problem(record: dict[str, Any], reference: dict[str, Any], function: str) -> str:
    for rank, (proc, ref) in enumerate(zip(record["processes"], reference["processes"])):
        batch, want = proc["batch"], ref["batch"]
        if batch is None:
            return f"process {rank} never got to build its batch: {record['message']}"
        if "error" in batch:
            return f"in process {rank}, {function} raised {batch['error']}"
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
        return f"{name!r} is sharded {pspec.show(got['spec'])}, the task asks for {pspec.show(want['spec'])}"
    shards = {int(s[0]): s for s in got["shards"] if isinstance(s, list) and len(s) == 4}
    for device, start, stop, total in want["shards"]:
        mine = shards.get(device)
        if mine is None or mine[1:3] != [start, stop]:
            return f"device {device} should hold rows {start}-{stop - 1} of {name!r}"
        if not (isinstance(mine[3], (int, float)) and abs(mine[3] - total) <= 1e-4 * (1 + abs(total))):
            return f"device {device} holds other values in rows {start}-{stop - 1} of {name!r} than this process's data"
    return ""


def _run_problem(record: dict[str, Any], reference: dict[str, Any], num_steps: int) -> str:
    if record["status"] != "ok":
        message: str = record["message"]  # a str: check_record saw to it
        return message
    procs, ref = record["processes"], reference["processes"][0]
    for rank, proc in enumerate(procs):
        if proc["mesh"] != ref["mesh"] and rank == 0:
            return f"the run's mesh is {proc['mesh']}, the reference's {ref['mesh']}"
        if set(proc["params"]) != set(ref["params"]):
            return f"process {rank} returned parameters {sorted(proc['params'])}, expected {sorted(ref['params'])}"
        if rank and not all(np.array_equal(proc["params"][p], procs[0]["params"][p]) for p in ref["params"]):
            worst = max(float(np.abs(proc["params"][p] - procs[0]["params"][p]).max()) for p in ref["params"])
            return (
                f"process {rank}'s parameters differ from process 0's by up to {worst:.3g}: the copies "
                "drifted apart (are the gradients averaged over 'data' before the update?)"
            )
        if proc["losses"].shape != ref["losses"].shape:
            return (
                f"process {rank} returned {proc['losses'].size} losses; the reference ran {ref['losses'].size} "
                f"steps, the most every process's data allows (up to num_steps={num_steps})"
            )
        if rank and not np.array_equal(proc["losses"], procs[0]["losses"]):
            return f"process {rank}'s loss history differs from process 0's: every process must compute the same steps"
    for name, got, want in [("loss history", procs[0]["losses"], ref["losses"])] + [
        (f"parameter {p}", procs[0]["params"][p], ref["params"][p]) for p in sorted(ref["params"])
    ]:
        if got.shape != want.shape:
            return f"{name} has shape {got.shape}, expected {want.shape}"
        if not np.allclose(got, want, rtol=TOLERANCE[0], atol=TOLERANCE[1], equal_nan=True):
            worst = float(np.nanmax(np.abs(got - want)))
            return f"the {name} differs from the reference run's by up to {worst:.3g} (rtol={TOLERANCE[0]:g}, atol={TOLERANCE[1]:g})"
    return ""


def score(task: Task, measured: Measured) -> list[TestResult]:
    """Points per layout: each part of the task is one layout of the same global mesh."""
    by_part = {harness.layout_label(*c.args): (c, m) for c, m in measured}
    return [
        part_result(task, part, problem, "hidden" if case.hidden else "visible")
        for part in task.points
        if part in by_part
        for case, m in [by_part[part]]
        for problem in [m["values"]["message"] if not m["values"]["ok"] else ""]
    ]
