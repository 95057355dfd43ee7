"""A case's resource signature beside the reference's (``records.SignatureTable``), as a student
reads it under the parts table: in plain text (``check()``'s repr, ``jaxcourse check``, the
Markdown feedback) and as HTML (the notebook and the HTML feedback)."""

from __future__ import annotations

import html
from collections.abc import Iterable

from ...core.records import SignatureRow, SignatureTable, TestResult
from ...core.units import quantity

HEADER = ("per device", "yours", "reference", "ratio", "allowed")


def tables(results: Iterable[TestResult]) -> list[tuple[str, SignatureTable]]:
    """Each part's signature table, with the part's name."""
    return [(r.name, r.signature) for r in results if r.signature]


def cells(row: SignatureRow) -> tuple[str, str, str, str, str]:
    """One row's cells: the dimension, both figures with their unit, their ratio, and the ratio
    the task allows."""
    yours, reference, unit = row["yours"], row["reference"], unit_of(row["dimension"])
    allowed = ", ".join(f"{bound:g}x ({part})" for part, bound in row["bounds"].items()) or "not judged"
    return row["dimension"], _number(yours, unit), _number(reference, unit), ratio(yours, reference), allowed


def unit_of(dimension: str) -> str:
    """A signature row's unit, from its dimension's words (``trusted/explain.py`` names them):
    FLOPs for the matmuls' work, bytes for everything else (held, at the peak, sent)."""
    return "FLOP" if "FLOP" in dimension else "B"


def _number(value: float | None, unit: str) -> str:
    return "unknown" if value is None else quantity(value, unit)


def ratio(yours: float | None, reference: float | None) -> str:
    """Yours over the reference's, "1.00x" where both are none, blank where either is unknown."""
    if yours is None or reference is None:
        return ""
    if not reference:
        return "1.00x" if not yours else "above none"
    return f"{yours / reference:.2f}x"


def text(results: Iterable[TestResult]) -> str:
    """Every signature table of ``results`` as aligned text, or "" when there is none."""
    blocks = []
    for part, table in tables(results):
        rows = [HEADER, *(cells(row) for row in table["rows"])]
        widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
        lines = [f"{part}, {table['case']}:"]
        lines += [
            "  " + "  ".join(_aligned(i, c, w) for i, (c, w) in enumerate(zip(row, widths))).rstrip() for row in rows
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _aligned(column: int, cell: str, width: int) -> str:
    """Figures right-aligned, words (the dimension, what is allowed) left."""
    return cell.rjust(width) if column in (1, 2, 3) else cell.ljust(width)


def to_html(table: SignatureTable) -> str:
    """One table, escaped, for a notebook's output or the HTML feedback."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells(row)) + "</tr>" for row in table["rows"]
    )
    caption = html.escape(f"what your program spends on {table['case']}, beside the reference's")
    return f"<table class='signature'><caption>{caption}</caption><tr>{head}</tr>{body}</table>"
