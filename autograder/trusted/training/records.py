"""Training records from the sandbox: one layout's run as plain JSON, checked field by field and
decoded into arrays before any verdict reads it; and the tolerance every verdict uses."""

from __future__ import annotations

import json
from math import prod
from typing import Any

import numpy as np

from ...core.errors import JaxcourseError

# Layouts differ only in where the all-reduce of the gradients runs (in one process, or across
# processes through gloo), which may add the 8 devices' values in another order: float32
# rounding, about 1e-7 relative per step, grown by a few steps of SGD with momentum. A step by
# gradient accumulation instead of an all-reduce differs the same way. Measured here:
# bit-identical across the three layouts, accumulation within this tolerance; every known mistake
# moves some parameter by 1e-2 or more after one step.
TOLERANCE = (1e-4, 1e-5)  # (rtol, atol) on every parameter and every loss
MAX_VALUES = 1 << 20  # numbers one layout's record may hold
DTYPES = frozenset({"float32", "float64", "int32", "bfloat16", "float16"})


class RecordError(JaxcourseError, ValueError):
    """What the sandbox sent back does not have the shape of a layout record."""


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
