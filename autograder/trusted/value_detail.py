"""Where wrong array values are wrong, in a few lines a student can act on: the first wrong
device's first differing value (in its piece and in the whole array), and the error's pattern
over the whole array (NaNs, one offset or factor, right and wrong rows or blocks, an error that
grows along a dimension). Expected values are shown only where asked (a student's own check)."""

from __future__ import annotations

from typing import Any

import numpy as np


class Errors:
    """The wrong values of an array, assembled from its devices' pieces: where any device's copy
    differs, by how much (the most of its copies), and the first wrong device's piece."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.wrong = np.zeros((), bool)
        self.size = np.zeros(())
        self.first: tuple[Any, np.ndarray, np.ndarray, np.ndarray] | None = None

    def add(self, shard: Any, piece: np.ndarray, want: np.ndarray, close: np.ndarray) -> None:
        if self.first is None:  # made for a wrong array only: most are right
            self.wrong, self.size = np.zeros(self.shape, bool), np.zeros(self.shape)
        gap = np.where(close, 0.0, np.abs(piece - want))
        gap[np.isnan(gap)] = np.inf  # a NaN where a number was expected, or the other way round
        self.wrong[shard.index] |= ~close
        self.size[shard.index] = np.maximum(self.size[shard.index], gap)
        if self.first is None:
            self.first = (shard, piece, want, close)

    def detail(self, got: np.ndarray, expected: np.ndarray, block: tuple[int, ...], sample: bool) -> str:
        """A few short lines for a student: where the first wrong device's piece first differs
        (in the piece and in the whole array), with ``sample`` the values expected and returned
        from there on, then the error's pattern over the whole array."""
        assert self.first is not None  # called once a device was wrong
        shard, piece, want, close = self.first
        at = tuple(int(i) for i in np.argwhere(~close)[0])
        starts = [s.start or 0 for s in shard.index] + [0] * (piece.ndim - len(shard.index))
        whole = tuple(i + start for i, start in zip(at, starts))
        if expected.ndim == 0:
            return f"the one value differs, on {shard.device}" + (
                f": expected {_numbers(want.ravel())}; returned {_numbers(piece.ravel())}" if sample else ""
            )
        if piece.shape == expected.shape:
            lines = [f"first differs at {_at(whole)} of the whole {_shape(expected.shape)}, on {shard.device}"]
        else:
            lines = [
                f"first differs at {_at(at)} of {shard.device}'s piece {_shape(piece.shape)}, "
                f"{_at(whole)} of the whole {_shape(expected.shape)}"
            ]
        if sample:
            start = int(np.ravel_multi_index(at, piece.shape))
            shown = slice(start, start + SAMPLE)
            lines.append(
                f"from there on, expected {_numbers(want.ravel()[shown])}; returned {_numbers(piece.ravel()[shown])}"
            )
        return "\n".join(lines + _pattern(self.wrong, self.size, got, expected, block))


SAMPLE = 4  # values shown from where a piece first differs, in its order (a student's own check only)
LISTED = 3  # runs of indices a pattern lists, e.g. "rows 0-3, 8, 12-15"


def _pattern(
    wrong: np.ndarray, size: np.ndarray, got: np.ndarray, expected: np.ndarray, block: tuple[int, ...]
) -> list[str]:
    """The error's pattern over the whole array, in a line or two: NaNs; the same error
    everywhere; right and wrong rows (or blocks of them, as the devices hold them); an error
    that grows along a dimension; else where the largest is."""
    lines = []
    finite = np.isfinite(size)
    broken = int((~np.isfinite(got) & np.isfinite(expected)).sum())
    if broken:
        first = tuple(int(i) for i in np.argwhere(~np.isfinite(got) & np.isfinite(expected))[0])
        lines.append(f"{broken} of {got.size} returned values are NaN or infinite (the first at {_at(first)})")
    elif wrong.all():
        same = _everywhere(got, expected, size)
        if same:
            return [same]
    places = _places(wrong, block)
    if places:
        lines.append(places)
    growth = _growth(np.where(finite, size, 0.0)) if finite.any() else ""
    if growth:
        lines.append(growth)
    if not lines:
        largest = tuple(int(i) for i in np.unravel_index(int(np.argmax(size)), size.shape))
        lines.append(
            f"no pattern along any dimension: {int(wrong.sum())} of {wrong.size} values differ, "
            f"by up to {float(size.max()):.3g} (at {_at(largest)})"
        )
    return lines


def _everywhere(got: np.ndarray, expected: np.ndarray, size: np.ndarray) -> str:
    """Every value wrong by one offset, one factor or about one amount; "" if not."""
    diff = got - expected
    if not np.isfinite(diff).all():
        return ""
    offset = float(np.median(diff))
    if np.abs(diff - offset).max() <= 0.05 * abs(offset):
        return f"every value is off by about {offset:+.3g} (returned minus expected): a term added or left out"
    scaled = np.abs(expected) > 1e-6 * np.abs(expected).max()
    if scaled.all():
        ratio = got / expected
        factor = float(np.median(ratio))
        if np.abs(ratio - factor).max() <= 0.05 * abs(factor):
            return f"every value is about {factor:.3g} times the expected one: a factor too many or too few"
    low, high = float(size.min()), float(size.max())
    if low >= 0.5 * high:
        return f"every value is wrong by about the same amount ({low:.3g} to {high:.3g}), with no pattern along any dimension"
    return ""


def _places(wrong: np.ndarray, block: tuple[int, ...]) -> str:
    """The dimension along which whole rows (or whole blocks of them, as the devices hold them)
    are right while others are wrong: the one with the largest share right; "" if none."""
    found: list[tuple[float, str]] = []
    for d, n in enumerate(wrong.shape):
        along = np.asarray(wrong.any(axis=tuple(a for a in range(wrong.ndim) if a != d)))
        said = _right_and_wrong(_name(d, wrong.ndim), along, "wrong") if not along.all() else ""
        step = block[d] if d < len(block) else n
        if not said and 0 < step < n and n % step == 0:
            blocks = along.reshape(n // step, step).any(axis=1)
            if not blocks.all():
                said = _right_and_wrong(_name(d, wrong.ndim), np.repeat(blocks, step), "hold wrong values")
                said += f" (in blocks of {step}, as the devices hold them)" if said else ""
        if said:
            found.append((1 - float(along.mean()), said))
    return max(found, key=lambda f: f[0])[1] if found else ""


def _right_and_wrong(name: str, along: np.ndarray, wrong: str) -> str:
    """E.g. "rows 0-3 of 32 right, 4-31 wrong", naming only a side of few runs; "" if neither is."""
    right, bad, n = _runs(~along), _runs(along), along.size
    if len(right) + len(bad) <= LISTED:
        return f"{name} {_ranges(right)} of {n} right, {_ranges(bad)} {wrong}"
    if len(right) <= min(len(bad), LISTED):
        return f"{name} {_ranges(right)} of {n} right, the other {int(along.sum())} {wrong}"
    if len(bad) <= LISTED:
        return f"{name} {_ranges(bad)} of {n} {wrong}, the other {int((~along).sum())} right"
    return ""


def _growth(size: np.ndarray) -> str:
    """The dimension along which the error grows (or shrinks) most steadily, with its mean error
    in the first and last quarter of that dimension; "" if along none."""
    best: tuple[float, str] | None = None
    for d, n in enumerate(size.shape):
        if n < 4:
            continue
        profile = size.mean(axis=tuple(a for a in range(size.ndim) if a != d))
        if profile.std() == 0:
            continue
        trend = float(np.corrcoef(np.arange(n), profile)[0, 1])
        q = max(1, n // 4)
        low, high = float(profile[:q].mean()), float(profile[-q:].mean())
        grows = trend >= 0.75 and high >= 2 * low
        if (grows or (trend <= -0.75 and low >= 2 * high)) and (best is None or abs(trend) > best[0]):
            name = _name(d, size.ndim)
            best = (
                abs(trend),
                f"the error {'grows' if grows else 'shrinks'} along the {name}: on average {low:.3g} in "
                f"{name} {_ranges([(0, q - 1)])}, {high:.3g} in {_ranges([(n - q, n - 1)])} of {n}",
            )
    return best[1] if best else ""


def _name(d: int, ndim: int) -> str:
    if ndim == 1:
        return "positions"
    if ndim == 2:
        return ("rows", "columns")[d]
    return f"indices of dimension {d}"


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The runs of True in ``mask``, as (first, last) indices."""
    runs: list[tuple[int, int]] = []
    for i in np.flatnonzero(mask):
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], int(i))
        else:
            runs.append((int(i), int(i)))
    return runs


def _ranges(runs: list[tuple[int, int]]) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def _at(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, index)) + "]"


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _numbers(values: np.ndarray) -> str:
    """Values as a student reads them: whole numbers as they are, others to 4 figures."""
    return " ".join(f"{int(v)}" if np.isfinite(v) and v == round(v) and abs(v) < 1e9 else f"{v:.4g}" for v in values)
