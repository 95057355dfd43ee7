"""Small SVG pictures for feedback: where each block of an output lives (asked for versus
returned), how many bytes a function moved against the minimum, and when a collective matmul's
matmuls can start.

A figure is plain data on a test result (``core.records.Figure``: traffic, sharding, overlap or
memory), made on the trusted side; this module only draws it, with every label escaped.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import product
from math import prod
from typing import Any

from ...core import pspec, units
from ...core.records import Figure, MemoryFigure, OverlapFigure, ShardingFigure, TestResult, TrafficFigure
from . import step_picture, svg_text
from .svg_text import width

Spec = list[Any]  # a PartitionSpec as JSON: entries None, "x" or ["x", "y"]
BAR_WIDTH = 320
CELL = 34


def svg(figure: Figure) -> str:
    """The figure as inline SVG, or "" for a kind this module does not draw (a results file
    written by another version)."""
    if figure["kind"] == "traffic":
        return _traffic(figure)
    if figure["kind"] == "sharding":
        return _sharding(figure)
    if figure["kind"] == "overlap":
        return _overlap(figure)
    if figure["kind"] == "memory":
        return _memory(figure)
    if figure["kind"] == "ring":
        return step_picture.draw(figure)
    return ""


def text(results: Iterable[TestResult]) -> str:
    """The pictures a terminal can show, as text: each visible part's step-by-step grid."""
    return "\n\n".join(
        f"{r.name}: {step_picture.text_grid(r.figure)}"
        for r in results
        if r.figure and r.figure["kind"] == "ring" and r.visibility == "visible"
    )


# ---------------------------------------------------------------- bytes moved


def _traffic(figure: TrafficFigure) -> str:
    """Horizontal bars: what was sent, the minimum, and the reference where known."""
    unit, reference = figure["unit"], figure.get("reference")
    bars = [
        ("sent", figure["sent"], "#cf222e" if figure["sent"] > figure["minimum"] + 1e-9 else "#1a7f37"),
        ("the least", figure["minimum"], "#57606a"),
    ]
    if reference is not None:
        bars.append(("the reference", reference, "#0969da"))
    said = "bytes" if unit == "bytes" else unit
    return _bar_chart(f"{said} sent per device", figure.get("case", "this case"), bars, unit)


def _memory(figure: MemoryFigure) -> str:
    """Two bars per leaf of the returned state: the bytes one device holds, and the reference's."""
    bars: list[tuple[str, float, str]] = []
    for path, held, share in figure["leaves"]:
        bars.append((path, held, "#cf222e" if held > share + 1e-9 else "#1a7f37"))
        bars.append(("the reference's", share, "#57606a"))
    return _bar_chart("bytes held per device after the step", figure.get("case", "this case"), bars, "bytes")


def _amount(value: float, unit: str) -> str:
    """A bar's figure: bytes with their prefix (14.7 MB); value-hops as a count."""
    return units.quantity(value, "B") if unit == "bytes" else f"{value:,.0f} {unit}"


def _bar_chart(title: str, case: str, bars: list[tuple[str, float, str]], unit: str) -> str:
    """Labelled horizontal bars, scaled to the longest, under the title and the case."""
    head, head_width, top = svg_text.heading(title, case)
    left = max(width(label) for label, _, _ in bars) + 12
    most = max(value for _, value, _ in bars) or 1.0
    rows = []
    for i, (label, value, colour) in enumerate(bars):
        y = top + 26 * i
        bar = max(1.0, BAR_WIDTH * value / most)
        rows.append(
            svg_text.text(0, y + 14, label)
            + f'<rect x="{left:.1f}" y="{y}" width="{bar:.1f}" height="18" fill="{colour}"/>'
            + svg_text.text(left + 6 + bar, y + 14, _amount(value, unit))
        )
    figures = max(width(_amount(value, unit)) for _, value, _ in bars)
    wide = max(left + BAR_WIDTH + 6 + figures + 10, head_width + 10)
    return svg_text.svg(wide, top + 26 * len(bars) + 4, f"{title}, on {case}", head + "".join(rows))


# ---------------------------------------------------------------- overlap


def _overlap(figure: OverlapFigure) -> str:
    """Columns are the transfers a matmul waits for; a ring's row has one matmul in each, the
    program's row has its matmuls where their last transfer lets them start (from a results file
    written before the step-by-step picture, or a program with no step to draw)."""
    steps, waits = int(figure["steps"]), [int(w) for w in figure["waits"]]
    columns = max(steps, max(waits, default=0) + 1)
    rows = [("a ring", [1] * steps), ("yours", [waits.count(c) for c in range(columns)])]
    head, head_width, top = svg_text.heading(
        "How many transfers each matmul waits for", figure.get("case", "this case")
    )
    top += 18
    left = width("a ring") + 12
    mine = "#1a7f37" if figure.get("ok") else "#cf222e"
    cells = [svg_text.text(0, top - 6, "transfers")]
    cells += [svg_text.text(left + CELL * c + 15, top - 6, str(c), text_anchor="middle") for c in range(columns)]
    for r, (label, counts) in enumerate(rows):
        y = top + 30 * r
        colour = "#57606a" if r == 0 else mine
        cells.append(svg_text.text(0, y + 17, label))
        cells += [
            f'<rect x="{left + CELL * c}" y="{y}" width="{CELL - 4}" height="24" fill="{colour}"/>'
            + svg_text.text(left + CELL * c + 15, y + 17, str(count), fill="#ffffff", text_anchor="middle")
            for c, count in enumerate(counts)
            if count
        ]
    key = "each box: how many matmuls wait for that many transfers; a ring multiplies one block per transfer"
    y = top + 30 * len(rows) + 12
    cells.append(svg_text.text(0, y, key))
    wide = max(left + CELL * columns + 10, head_width + 10, width(key) + 10)
    return svg_text.svg(
        wide, y + 8, f"How many transfers each matmul waits for, on {figure.get('case')}", head + "".join(cells)
    )


# ---------------------------------------------------------------- where blocks live


def blocks(mesh: dict[str, int], spec: Spec, ndim: int) -> dict[tuple[int, ...], list[int]]:
    """Which devices hold each block of an array laid out by ``spec`` on ``mesh`` (devices
    numbered in mesh order, as ``jax.make_mesh`` numbers them on CPUs)."""
    names = list(mesh)
    entries = [_axes(e) for e in (list(spec) + [None] * ndim)[:ndim]]
    held: dict[tuple[int, ...], list[int]] = {}
    for device, coords in enumerate(product(*(range(mesh[n]) for n in names))):
        at = dict(zip(names, coords))
        index = tuple(_mixed_radix([at[a] for a in axes], [mesh[a] for a in axes]) for axes in entries)
        held.setdefault(index, []).append(device)
    return held


def _axes(entry: Any) -> list[str]:
    if entry is None:
        return []
    return [entry] if isinstance(entry, str) else list(entry)


def _mixed_radix(digits: list[int], sizes: list[int]) -> int:
    value = 0
    for digit, size in zip(digits, sizes):
        value = value * size + digit
    return value


def _grid(
    mesh: dict[str, int], spec: Spec, ndim: int, varying: list[str], x0: float, title: str
) -> tuple[str, float, float]:
    """The array as a grid of blocks (dimension 0 down, 1 across), each labelled with its devices.
    Axes in ``varying`` split nothing yet give each device along them its own, different copy.
    Returns the SVG elements, their width and their height."""
    held = blocks(mesh, spec, max(ndim, 1))
    counts = [prod(mesh[a] for a in _axes(e)) for e in (list(spec) + [None, None])[:2]]
    rows, cols = counts[0], counts[1] if ndim > 1 else 1
    copies = prod(mesh[a] for a in varying)
    labelled = [
        (r, c[0] if c else 0, _label(_copy_devices(d, mesh, varying, k)))
        for k in range(copies)
        for (r, *c), d in sorted(held.items())
    ]
    cell = max([CELL * 1.6] + [width(label) + 10 for *_, label in labelled if label])
    wide, high = max(cols * cell, 120, width(title, 12, True)), rows * CELL
    parts = [svg_text.text(x0, 12, title, 12, font_weight="bold")]
    for copy in range(copies):
        dy = 20 + copy * (high + 10)
        for (r, *c), devices in sorted(held.items()):
            col = c[0] if c else 0
            mine = _copy_devices(devices, mesh, varying, copy)
            if not mine:
                continue
            x, y = x0 + col * cell, dy + r * CELL
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{cell:.1f}" height="{CELL}" '
                f'fill="{_colour(r * cols + col)}" stroke="#24292f"/>' + svg_text.text(x + 4, y + 21, _label(mine))
            )
    return "".join(parts), wide, 20 + copies * (high + 10)


def _label(devices: list[int]) -> str:
    return ("dev " + ",".join(map(str, devices)) if len(devices) <= 4 else f"{len(devices)} devices") if devices else ""


def _copy_devices(devices: list[int], mesh: dict[str, int], varying: list[str], copy: int) -> list[int]:
    """The devices among ``devices`` whose coordinates along ``varying`` are copy number ``copy``."""
    if not varying:
        return devices
    names = list(mesh)
    picked = []
    for device in devices:
        coords = dict(zip(names, _coords(device, [mesh[n] for n in names])))
        if _mixed_radix([coords[a] for a in varying], [mesh[a] for a in varying]) == copy:
            picked.append(device)
    return picked


def _coords(device: int, sizes: list[int]) -> list[int]:
    out = []
    for size in reversed(sizes):
        device, digit = divmod(device, size)
        out.append(digit)
    return out[::-1]


def _colour(i: int) -> str:
    palette = ("#ddf4ff", "#fff8c5", "#dafbe1", "#ffebe9", "#fbefff", "#fff1e5", "#eaeef2", "#d8f3f0")
    return palette[i % len(palette)]


def _sharding(figure: ShardingFigure) -> str:
    """Side by side: the layout the task asks for, and the one the function returned."""
    mesh, ndim = figure["mesh"], len(figure["shape"])
    asked, w1, h1 = _grid(mesh, figure["expected"], ndim, [], 0, f"asked for: {pspec.show(figure['expected'])}")
    returned = figure.get("returned")
    varying = list(figure.get("varying", []))
    title = (
        f"returned: {pspec.show(returned)}"
        if returned is not None
        else f"returned: a different value along {', '.join(map(repr, varying))}"
    )
    got, w2, h2 = _grid(mesh, returned if returned is not None else figure["expected"], ndim, varying, w1 + 40, title)
    label = f"output sharding on mesh {mesh}"
    return svg_text.svg(w1 + w2 + 60, max(h1, h2) + 10, label, asked + got)
