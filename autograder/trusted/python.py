"""The plain-Python kind, trusted half: the reference's answer, and the student's (returned by
the sandbox as plain data) compared with it."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..core.records import Measurement, PythonSig
from ..harness import python as harness
from . import reference
from .jobs import Evaluation, ReferenceJob, References
from .measure import compare_python
from .verdict import score as score  # re-exported: this kind's verdict, under the registry's name


def reference_record(job: ReferenceJob, refs: References) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    sig = cast(PythonSig, job["sig"])  # this module is handed only its own kind
    return {"result": harness.call(refs.lookup(sig["function"]), sig)}, {}


def measure(test: Evaluation) -> Measurement:
    if test.get("failure"):
        return {"values": {"ok": False, "message": test["failure"]}}
    record, _ = reference.load(test["reference"])
    return {"values": compare_python(test["result"], record["result"])}
