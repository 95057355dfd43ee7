"""Students whose cells read alike: copydetect's winnowed fingerprints of each graded function's
solution cell (names, strings and comments normalised away by its tokenizer), compared across
the class. Program likeness (``similarity.py``) sees what a function computes; this sees how it
was written, which catches a copy that was then changed to compute something else.

What no one in particular wrote is set aside before comparing, as MOSS does: the release's own
text (every code cell of the released notebook), and any passage that more than a third of the
class's cells of that function share; and a match of less than two lines or so is no evidence
(a stub with its docstring deleted, a one-line answer). Nothing is decided: pairs are ranked for a person to read.
"""

from __future__ import annotations

import copy
import io
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

THRESHOLD = 0.5  # at least this share of one student's own text found in the other's
COMMON = 1 / 3  # a passage more than this share of the class wrote is no one's in particular
NOISE = 25  # copydetect's defaults: a match shorter than this many normalised characters is noise,
GUARANTEE = 25  # and one at least this long is always found
MINIMUM = 2 * NOISE  # less text in common than this (about two lines, normalised) is no evidence

Span = tuple[int, int]  # [start, end) in a cell's text


@dataclass(frozen=True)
class TextAlike:
    """One function's cells two students wrote alike: the share of each one's own text (the
    release's and the class's common passages aside) found in the other's, and where it lies."""

    function: str
    shares: tuple[float, float]
    spans: tuple[list[Span], list[Span]]

    @property
    def share(self) -> float:
        return max(self.shares)


def release_text(notebook: Path) -> str:
    """Every code cell of the released notebook: what each student was given, in one text."""
    from ..submission import notebooks as nbio

    nb = nbio.read(notebook)
    return "\n\n".join(str(c.source) for c in nb.cells if c.cell_type == "code")


def alike_cells(
    cells: dict[str, dict[str, str]],
    release: str,
    threshold: float = THRESHOLD,
    common: float = COMMON,
    minimum: int = MINIMUM,
) -> dict[tuple[str, str], list[TextAlike]]:
    """Each pair of students (``cells``: student -> function -> cell) with a function written
    alike, the release's text and the class's common passages aside."""
    given = set(_fingerprint(release).hashes) if release.strip() else set()
    found: dict[tuple[str, str], list[TextAlike]] = {}
    for function in sorted({f for by in cells.values() for f in by}):
        written = {s: by[function] for s, by in cells.items() if by.get(function, "").strip()}
        texts = set(written.values())  # a copy is fingerprinted once
        prints = {t: _fingerprint(t, given) for t in texts}
        shared = _common_hashes((prints[written[s]] for s in written), common)
        if shared:
            prints = {t: _without(fp, shared) for t, fp in prints.items()}
        for pair, alike in _compare(function, {s: prints[t] for s, t in written.items()}, threshold, minimum):
            found.setdefault(pair, []).append(alike)
    return found


def _fingerprint(text: str, boilerplate: Iterable[int] = ()) -> Any:
    from copydetect import CodeFingerprint

    return CodeFingerprint(
        "cell.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=list(boilerplate), language="python", fp=io.StringIO(text)
    )


def _without(fp: Any, hashes: set[int]) -> Any:
    """``fp`` with ``hashes`` set aside, as copydetect sets aside boilerplate (without lexing the
    text again): its fingerprints, their places and the text they cover."""
    from copydetect.utils import get_token_coverage

    kept = copy.copy(fp)
    kept.hash_idx = {h: places for h, places in fp.hash_idx.items() if h not in hashes}
    kept.hashes = set(kept.hash_idx)
    kept.token_coverage = get_token_coverage(kept.hash_idx, fp.k, len(fp.filtered_code))
    return kept


def _common_hashes(prints: Iterable[Any], common: float) -> set[int]:
    """The fingerprints that more than ``common`` of the cells (and at least three) hold."""
    prints = list(prints)
    counts = Counter(h for p in prints for h in set(p.hashes))
    floor = max(3, math.floor(common * len(prints)) + 1)
    return {h for h, n in counts.items() if n >= floor}


def _compare(
    function: str, prints: dict[str, Any], threshold: float, minimum: int
) -> Iterable[tuple[tuple[str, str], TextAlike]]:
    """copydetect's comparison for every pair holding a fingerprint in common (the others share
    nothing it could find)."""
    from copydetect import compare_files

    holders: dict[int, list[str]] = {}
    for student in sorted(prints):
        for h in set(prints[student].hashes):
            holders.setdefault(h, []).append(student)
    candidates = {pair for students in holders.values() for pair in combinations(students, 2)}
    compared: dict[tuple[int, int], Any] = {}  # copies share one fingerprint: compared once
    for a, b in sorted(candidates):
        key = (id(prints[a]), id(prints[b]))
        if key not in compared:
            compared[key] = compare_files(prints[a], prints[b])
        overlap, shares, (spans_a, spans_b) = compared[key]
        if overlap >= minimum and max(shares) >= threshold:
            spans = (_spans(spans_a), _spans(spans_b))
            yield (a, b), TextAlike(function, (float(shares[0]), float(shares[1])), spans)


def _spans(slices: Any) -> list[Span]:
    """copydetect's 2xN array of starts and ends, as plain pairs."""
    return [(int(s), int(e)) for s, e in zip(*slices, strict=True)] if len(slices) else []


def marked(text: str, spans: list[Span]) -> str:
    """``text`` escaped for HTML, the spans found in the other student's cell in ``<mark>``."""
    from html import escape

    out, at = [], 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end > start:
            out += [escape(text[at:start]), f"<mark>{escape(text[start:end])}</mark>"]
            at = end
    return "".join(out) + escape(text[at:])
