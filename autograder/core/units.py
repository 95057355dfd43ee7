"""Numbers with their units, for people: ``quantity(14680064, "B")`` is "14.7 MB", and
``duration(0.000373)`` "0.373 ms". Three significant figures and SI's decimal prefixes
(kB is 1000 bytes, not 1024), so that a figure reads the same wherever the grader prints it.
"""

from __future__ import annotations

import math

_PREFIXES = ("", "k", "M", "G", "T", "P", "E")
# A duration's units, largest first; each is used while the time is at least a tenth of it.
_TIMES = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


def _round3(value: float) -> float:
    """``value`` rounded to three significant figures (0 stays 0)."""
    return float(f"{value:.3g}") if value else 0.0


def _digits(value: float) -> str:
    """A positive number already rounded to three significant figures, with those three figures
    shown: 1.20, 12.5, 0.373, 512; a number of 1000 or more as its rounded integer."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}" if value < 0.1 else f"{value:.3f}"


def quantity(value: float, unit: str) -> str:
    """``value`` of ``unit`` at three significant figures with an SI prefix: 14680064 bytes is
    "14.7 MB", 68719476736 FLOP "68.7 GFLOP", 3088 bytes "3.09 kB". A whole number under 1000
    stays as it is ("512 B", "0 B"); a fraction under 1 takes no prefix ("0.500 B")."""
    if not math.isfinite(value):
        return f"{value} {unit}"
    if value < 0:
        return "-" + quantity(-value, unit)
    if value < 1000 and float(value).is_integer():
        return f"{int(value)} {unit}"
    rounded = _round3(value)
    power = 0
    while power < len(_PREFIXES) - 1 and rounded >= 1000:
        rounded = _round3(rounded / 1000)
        power += 1
    return f"{_digits(rounded)} {_PREFIXES[power]}{unit}"


def duration(seconds: float) -> str:
    """A time at three significant figures in s, ms, µs or ns, the largest unit it is at least a
    tenth of: "1.25 s", "0.373 ms", "12.5 µs"."""
    if not math.isfinite(seconds):
        return f"{seconds} s"
    if seconds < 0:
        return "-" + duration(-seconds)
    if seconds == 0:
        return "0 s"
    rounded = _round3(seconds)
    for unit, size in _TIMES:
        if rounded >= 0.1 * size or unit == _TIMES[-1][0]:
            return f"{_digits(_round3(rounded / size))} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover
