"""Programs already handed in, measured once: many students export the very same program for a
test (the same computation, whatever its comments, names or lines: artifacts carry no source
locations), and a student checking a notebook again re-exports every function they did not touch.
Measuring such a program again would give the same record.

A record is reused only for the same artifact bytes (hashed), the same test entry (its inputs'
seed, reference, tolerance) and the same meshes reported by the sandbox, which the worker checked
when it measured the first copy; records are kept per version of the package's code, so a hit is
exactly what the worker would measure again. They are kept in memory and, given a folder, on disk
(the grader's own cache: never where a sandbox can write).

Submissions graded at once (a class's first ones, a deadline's rush on a worker) hand in the same
programs at once: each program not yet measured is claimed by the first that needs it, and the
others measure what they alone claimed before they wait for the rest.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ...core.files import write_atomic
from ...core.records import Measurement
from ...trusted.jobs import Evaluation
from ..sandbox.package import code_text


@dataclass
class Claimed:
    """What a submission measures itself (``mine``: release it once measured, measured or not)
    and what another submission is measuring now (``theirs``: wait for it)."""

    mine: list[Evaluation]
    theirs: list[Evaluation]


class MeasuredPrograms:
    def __init__(self, folder: Path | None = None) -> None:
        self._seen: dict[str, Measurement] = {}
        self._lock = threading.Lock()
        self._measuring: dict[str, threading.Event] = {}  # key -> set once its claimer is done
        version = hashlib.sha256(code_text().encode()).hexdigest()[:16]
        self._folder = folder / version if folder is not None else None

    def reused(self, entries: list[Evaluation], meshes: dict[str, Any]) -> dict[str, Measurement]:
        """The records of ``entries`` already measured, by test id (copies: scoring may add to them)."""
        found = {}
        for entry in entries:
            record = self._get(_key(entry, meshes))
            if record is not None:
                found[entry["id"]] = record
        return found

    def claim(self, entries: list[Evaluation], meshes: dict[str, Any]) -> Claimed:
        """``entries`` (none of them reused) split: those nobody measures now are claimed for the
        caller; the rest are being measured by another submission."""
        mine, theirs = [], []
        keyed = [(_key(entry, meshes), entry) for entry in entries]  # the artifacts read before the lock
        with self._lock:
            for key, entry in keyed:
                if key in self._measuring or key in self._seen:  # or measured since it was looked up
                    theirs.append(entry)
                else:
                    self._measuring[key] = threading.Event()
                    mine.append(entry)
        return Claimed(mine, theirs)

    def release(self, entries: list[Evaluation], meshes: dict[str, Any]) -> None:
        """The caller's claims given up, measured (and remembered) or not: their waiters go on."""
        keys = [_key(entry, meshes) for entry in entries]
        with self._lock:
            for key in keys:
                event = self._measuring.pop(key, None)
                if event is not None:
                    event.set()

    def awaited(self, entries: list[Evaluation], meshes: dict[str, Any], timeout: float) -> dict[str, Measurement]:
        """The records of ``entries`` once their claimers are done (or ``timeout`` seconds have
        passed): what a claimer could not measure (a hang, a crash) is left to the caller."""
        deadline = time.monotonic() + timeout
        keys = [_key(entry, meshes) for entry in entries]
        with self._lock:
            events = [self._measuring[key] for key in keys if key in self._measuring]
        for event in events:
            event.wait(max(0.0, deadline - time.monotonic()))
        return self.reused(entries, meshes)

    def remember(self, entries: list[Evaluation], meshes: dict[str, Any], measured: dict[str, Measurement]) -> None:
        """Keep what the worker measured (not what the grader blamed on a hang or a crash, nor a
        program at scale left uncosted: another submission's same program may have right values)."""
        for entry in entries:
            record = measured.get(entry["id"])
            if record is not None and (not entry["sig"].get("at_scale") or "cost" in record):
                self._put(_key(entry, meshes), record)

    def _get(self, key: str) -> Measurement | None:
        with self._lock:
            if key in self._seen:
                return copy.deepcopy(self._seen[key])
        path = self._folder / f"{key}.json" if self._folder is not None else None
        if path is None or not path.is_file():
            return None
        try:
            return cast(Measurement, json.loads(path.read_text()))  # written by _put, below
        except ValueError:
            return None  # cut short by a killed grader: measured again

    def _put(self, key: str, record: Measurement) -> None:
        with self._lock:  # two submissions of one class may hand in the same program at once
            self._seen[key] = copy.deepcopy(record)
            if self._folder is not None:
                self._folder.mkdir(parents=True, exist_ok=True)
                write_atomic(self._folder / f"{key}.json", json.dumps(record))


def _key(entry: Evaluation, meshes: dict[str, Any]) -> str:
    digest = hashlib.sha256()
    described = {k: v for k, v in entry.items() if k != "artifact"}
    digest.update(json.dumps([described, meshes], sort_keys=True).encode())
    if "artifact" in entry:
        digest.update(Path(entry["artifact"]).read_bytes())
    return digest.hexdigest()
