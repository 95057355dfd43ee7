"""The plain-Python kind (sharding arithmetic, cost models): a case is its arguments, and the
answer is the return value or the exception raised, as plain data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import pspec
from ..core.records import PythonSig
from ..core.tasks import Case, Task

REPORTS_MESH = False


def signature(task: Task, case: Case, assignment: str = "", salt: str = "") -> PythonSig:
    return {"kind": "python", "function": task.name, "args": list(case.args)}


def decode_arg(arg: Any) -> Any:
    """``{"P": [...]}`` stands for a PartitionSpec."""
    if isinstance(arg, dict) and set(arg) == {"P"}:
        return pspec.from_json(arg["P"])
    return arg


def call(fn: Callable[..., Any], sig: PythonSig) -> dict[str, Any]:
    """Call a plain-Python task; its return value or the exception it raised, as plain data."""
    try:
        value = fn(*(decode_arg(a) for a in sig["args"]))
    except Exception as err:  # the exception type is part of the answer
        return {"raises": type(err).__name__, "message": str(err)[:300]}
    return {"value": to_plain(value)}


def to_plain(value: Any) -> Any:
    """JSON-safe data; tuples become lists, anything exotic becomes its repr."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    import numpy as np

    if isinstance(value, (np.ndarray, np.generic)):
        return to_plain(value.tolist())
    return {"repr": repr(value)[:200]}


def in_sandbox(fn: Callable[..., Any], sig: PythonSig, namespace: dict[str, Any]) -> dict[str, Any]:
    return call(fn, sig)
