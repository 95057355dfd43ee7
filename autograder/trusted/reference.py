"""Reference records on disk, one format for every kind: a JSON record beside an ``.npz`` of its
arrays (never pickled), written so that a killed worker leaves no half-written record."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..core.files import write_atomic
from ..core.records import CaseTargets

Arrays = dict[str, np.ndarray]


def save(prefix: str | Path, record: dict[str, Any], arrays: Arrays | None = None) -> None:
    """Arrays first, the record last: a record on disk means its arrays are complete."""
    prefix = Path(prefix)
    if arrays:
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]  # keys are array names, never savez's allow_pickle
        write_atomic(prefix.with_suffix(".npz"), buf.getvalue())
    write_atomic(prefix.with_suffix(".json"), json.dumps(record))


def load(prefix: str | Path) -> tuple[dict[str, Any], Arrays]:
    prefix = Path(prefix)
    record = json.loads(prefix.with_suffix(".json").read_text())
    arrays: Arrays = {}
    if prefix.with_suffix(".npz").is_file():
        with np.load(prefix.with_suffix(".npz"), allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in saved.files}
    return record, arrays


def targets(prefix: str | Path) -> CaseTargets:
    """The closed-form targets a record holds for its case (none for a kind that has none)."""
    found: CaseTargets = json.loads(Path(prefix).with_suffix(".json").read_text()).get("targets", {})
    return found


def exists(prefix: str | Path) -> bool:
    return Path(prefix).with_suffix(".json").is_file()
