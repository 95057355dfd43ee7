"""How often a login may fail: per user name and per client address, in a sliding window.

Past its limit, a key waits before its next try, twice as long for each failure over the limit
(up to ``MAX_WAIT``), and no password is hashed for it meanwhile: a flood of wrong passwords
costs the hub a dictionary lookup each, never a hash.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_WAIT = 60.0  # seconds a key may be made to wait, at most
MAX_KEYS = 10_000  # keys with failures held before those out of the window are swept


@dataclass
class Throttle:
    limit: int  # failures a key may have in ``window`` before it waits
    window: float  # seconds
    clock: Callable[[], float] = time.monotonic
    failures: dict[str, deque[float]] = field(default_factory=dict)

    def wait(self, key: str) -> float:
        """Seconds until ``key`` may try again; 0 when it may now."""
        recent = self._recent(key)
        over = len(recent) - self.limit
        if over < 0:
            return 0.0
        return max(0.0, recent[-1] + min(MAX_WAIT, 2.0**over) - self.clock())

    def failed(self, key: str) -> None:
        recent = self._recent(key)
        recent.append(self.clock())
        self.failures[key] = recent
        if len(self.failures) > MAX_KEYS:  # a flood of made-up names: keep only what still counts
            self.failures = {k: v for k, v in self.failures.items() if self._recent(k)}

    def succeeded(self, key: str) -> None:
        self.failures.pop(key, None)

    def _recent(self, key: str) -> deque[float]:
        """``key``'s failures within the window (those older are dropped)."""
        recent = self.failures.get(key, deque())
        while recent and recent[0] < self.clock() - self.window:
            recent.popleft()
        return recent
