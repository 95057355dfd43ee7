"""Two ways of doing one thing measured in one run, taking turns, and each side's median. On a
shared, noisy machine a burst of load then lands on both sides alike, not on whichever ran during
it; the ratio of medians is the figure to quote, the seconds only beside it."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from typing import TypeVar

S = TypeVar("S")
R = TypeVar("R")


def alternating(sides: Mapping[str, S], pairs: int, run: Callable[[S], R]) -> dict[str, list[R]]:
    """``run`` on every side in turn, ``pairs`` rounds; each side's results in order."""
    results: dict[str, list[R]] = {name: [] for name in sides}
    for _ in range(pairs):
        for name, side in sides.items():
            results[name].append(run(side))
    return results


def medians(seconds: Mapping[str, list[float]], width: int = 14) -> list[str]:
    """One line a side: its median and its least, the least being what the machine allows."""
    return [
        f"  {name:{width}s} median {statistics.median(runs):.3f} s, least {min(runs):.3f} s"
        for name, runs in seconds.items()
    ]


def ratio(seconds: Mapping[str, list[float]], over: str, under: str) -> str:
    """``over``'s median against ``under``'s, the line that says which way the change went."""
    return f"  {over} / {under}: {statistics.median(seconds[over]) / statistics.median(seconds[under]):.2f}x"
