"""Sandboxes started ahead of need: while one submission runs, the next one's container is made and
started, and its runner imports JAX and waits for its job (``runner --warm``). Each is still
used for exactly one submission and then removed: warm changes when a container starts, never
what it holds or who uses it.

A slot is a folder (its ``job`` and ``out`` folders mounted in its container) and the container;
the grader's scratch folder for a submission is the slot's folder (``DockerSandbox.workspace``).
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...engine.containers import remove
from .sandbox import CompileCache

if TYPE_CHECKING:
    from docker.models.containers import Container

IDLE = 600.0  # seconds a warm runner waits for its job before it exits
FRESH = IDLE - 60.0  # a slot older than this is removed rather than handed out


@dataclass(frozen=True)
class WarmSpec:
    """What a warm container is made for: a slot serves only a run that asks for the same."""

    timeout: float
    cache: CompileCache | None


@dataclass
class WarmSlot:
    folder: Path  # holds job/ and out/, mounted in ``container``
    container: Container
    spec: WarmSpec
    started: float  # time.monotonic() when it was started

    def discard(self) -> None:
        remove(self.container)
        shutil.rmtree(self.folder, ignore_errors=True)


class WarmPool:
    """Keeps ``size`` slots of one spec started; ``take`` hands one out (or None) and starts its
    replacement in the background."""

    def __init__(self, spec: WarmSpec, size: int, start: Callable[[WarmSpec], WarmSlot]) -> None:
        self.spec, self.size, self._start = spec, size, start
        self._ready: list[WarmSlot] = []
        self._starting = 0
        self._closed = False
        self._lock = threading.Lock()
        self.fill()

    def take(self) -> WarmSlot | None:
        with self._lock:
            slot = self._ready.pop(0) if self._ready else None
        self.fill()
        if slot is not None and time.monotonic() - slot.started > FRESH:
            slot.discard()
            return None
        return slot

    def fill(self) -> None:
        """Start slots in the background until ``size`` are ready or starting."""
        with self._lock:
            wanted = 0 if self._closed else self.size - len(self._ready) - self._starting
            self._starting += max(0, wanted)
        for _ in range(wanted):
            threading.Thread(target=self._add, daemon=True).start()

    def _add(self) -> None:
        try:
            slot = self._start(self.spec)
        except Exception:  # the engine refused one: that submission starts cold instead
            with self._lock:
                self._starting -= 1
            return
        with self._lock:
            self._starting -= 1
            keep = not self._closed
            if keep:
                self._ready.append(slot)
        if not keep:
            slot.discard()

    def close(self) -> None:
        """Remove every slot not handed out; those still starting are removed as they come."""
        with self._lock:
            self._closed = True
            ready, self._ready = self._ready, []
        for slot in ready:
            slot.discard()
