"""Where one submission's grading time goes: seconds per named phase, and counts.

Both sides fill one. The runner times its own phases inside the sandbox (shown, never scored on:
the sandbox could write anything there); the grader times the container's life, the transfer
back, the trusted worker's start-up and each measurement, and counts compile-cache hits.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Stopwatch:
    seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def update(self, seconds: Mapping[str, float], prefix: str = "") -> None:
        for name, value in seconds.items():
            self.add(prefix + name, value)


def medians(watches: Iterable[Stopwatch]) -> str:
    """A table: each phase's median seconds over the submissions that had it, and each count's
    median and total, phases in the order they first appear."""
    watches = list(watches)
    seconds: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for watch in watches:
        for name, value in watch.seconds.items():
            seconds.setdefault(name, []).append(value)
        for name, n in watch.counts.items():
            counts.setdefault(name, []).append(n)
    width = max(map(len, [*seconds, *counts]), default=0)
    lines = [f"profile of {len(watches)} submissions (median seconds; n: submissions with that phase)"]
    lines += [f"  {name:<{width}}  {statistics.median(v):7.3f} s  n={len(v)}" for name, v in seconds.items()]
    lines += [
        f"  {name:<{width}}  {statistics.median(v):7.1f}    total {sum(v)}  n={len(v)}" for name, v in counts.items()
    ]
    return "\n".join(lines)
