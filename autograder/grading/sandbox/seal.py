"""The hidden cases reach the sandbox only after what it wrote of the visible ones is sealed.

Whatever the sandbox may say that a student reads (its notebook's error, a visible case's
message) is in the files of its first phase. ``HiddenPhase`` watches for them while the sandbox
runs, copies them into the grader's own folder the moment they appear, and only then writes the
hidden cases where the runner waits for them (``core/protocol.py``). Nothing the sandbox writes
later can reach a student: the copy is what is read, and the second phase's files hold hidden
cases only, whose words never leave the instructor.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import TracebackType

from ...core.files import write_atomic
from ...core.protocol import ARTIFACTS, HIDDEN_PLAN, MAX_ARTIFACTS_BYTES, MAX_RESULTS_BYTES, RESULTS, PlannedCall
from ...trusted.results import NoResults, ResultsError, read_regular

POLL = 0.01  # seconds between looks for the first phase's results


class HiddenPhase:
    """Seals the first phase's results (``out`` -> ``sealed``) as soon as the runner writes them,
    then hands the runner ``hidden`` (into ``job``). Without hidden cases it only seals."""

    def __init__(self, job: Path, out: Path, sealed: Path, hidden: list[PlannedCall]) -> None:
        self.job, self.out, self.sealed, self.hidden = job, out, sealed, hidden
        self.done = threading.Event()  # sealed (the copy is complete, or the files were unreadable)
        self.problem = (
            ""  # why a file of the first phase could not be sealed (too large, not a file), in the grader's words
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> HiddenPhase:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def is_sealed(self) -> bool:
        return self.done.is_set()

    def _watch(self) -> None:
        while not self._stop.is_set():
            if os.path.lexists(self.out / RESULTS):
                self._seal()
                return
            self._stop.wait(POLL)

    def _seal(self) -> None:
        """Copy what is there now; an unreadable file is left out (the reader then says why) and
        the runner is handed no hidden case, so that it stops at once."""
        self.sealed.mkdir(exist_ok=True)
        readable = True
        for name, limit, what in (
            (RESULTS, MAX_RESULTS_BYTES, "results"),
            (ARTIFACTS, MAX_ARTIFACTS_BYTES, "artifacts"),
        ):
            try:
                (self.sealed / name).write_bytes(read_regular(self.out / name, limit, what))
            except NoResults:
                pass  # no artifacts: the reader says what that means for each test
            except ResultsError as err:
                readable, self.problem = False, self.problem or str(err)
        self.done.set()
        plan = self.job / HIDDEN_PLAN
        write_atomic(plan, json.dumps({"tests": self.hidden if readable else []}))
        plan.chmod(0o644)  # the sandbox's user reads it
