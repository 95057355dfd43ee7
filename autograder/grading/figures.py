"""Small SVG pictures for feedback: where each block of an output lives (asked for versus
returned), how many bytes a function moved against the minimum, and when a collective matmul's
matmuls can start.

A figure is plain data on a test result (``core.records.Figure``: traffic, sharding, overlap or
memory), made on the trusted side; this module only draws it, with every label escaped.
"""

from __future__ import annotations

from html import escape
from itertools import product
from math import prod
from typing import Any

from ..core import pspec
from ..core.records import Figure, MemoryFigure, OverlapFigure, RingFigure, ShardingFigure, TrafficFigure

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
        return _ring(figure)
    return ""


# ---------------------------------------------------------------- bytes moved


def _traffic(figure: TrafficFigure) -> str:
    """Horizontal bars: what was sent, the minimum, and the reference where known."""
    unit, reference = figure["unit"], figure.get("reference")
    bars = [
        ("sent", figure["sent"], "#cf222e" if figure["sent"] > figure["minimum"] + 1e-9 else "#1a7f37"),
        ("minimum", figure["minimum"], "#57606a"),
    ]
    if reference is not None:
        bars.append(("reference", reference, "#0969da"))
    return _bar_chart(f"{unit} sent per device on {figure.get('case', 'this case')}", bars, unit)


def _memory(figure: MemoryFigure) -> str:
    """Two bars per leaf of the returned state: the bytes one device holds, and the reference's."""
    bars: list[tuple[str, float, str]] = []
    for path, held, share in figure["leaves"]:
        bars.append((path, held, "#cf222e" if held > share + 1e-9 else "#1a7f37"))
        bars.append(("the reference's", share, "#57606a"))
    title = f"bytes held per device after the step on {figure.get('case', 'this case')}"
    return _bar_chart(title, bars, "bytes", left=130)


def _bar_chart(title_text: str, bars: list[tuple[str, float, str]], unit: str, left: int = 80) -> str:
    """Labelled horizontal bars, scaled to the longest, each starting ``left`` pixels in."""
    top = max(value for _, value, _ in bars) or 1.0
    rows = []
    for i, (label, value, colour) in enumerate(bars):
        y = 8 + 26 * i
        width = max(1.0, BAR_WIDTH * value / top)
        rows.append(
            f'<text x="0" y="{y + 14}" font-size="12">{escape(label)}</text>'
            f'<rect x="{left}" y="{y}" width="{width:.1f}" height="18" fill="{colour}"/>'
            f'<text x="{left + 6 + width:.1f}" y="{y + 14}" font-size="12">{value:g} {escape(unit)}</text>'
        )
    height = 16 + 26 * len(bars)
    title = escape(title_text)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{BAR_WIDTH + left + 120}" height="{height + 18}" '
        f'role="img" aria-label="{title}"><title>{title}</title>'
        f'<g transform="translate(0,18)">{"".join(rows)}</g>'
        f'<text x="0" y="12" font-size="12" font-weight="bold">{title}</text></svg>'
    )


# ---------------------------------------------------------------- overlap


def _overlap(figure: OverlapFigure) -> str:
    """Columns are ring steps (how many transfers have arrived); a ring's row has one matmul in
    each, the program's row has its matmuls where their last transfer lets them start."""
    steps, waits = int(figure["steps"]), [int(w) for w in figure["waits"]]
    rows = [("a ring", [1] * steps), ("yours", [waits.count(c) for c in range(max(steps, max(waits, default=0) + 1))])]
    width = 90 + CELL * len(rows[1][1])
    cells = []
    for r, (label, counts) in enumerate(rows):
        y = 40 + 30 * r
        cells.append(f'<text x="0" y="{y + 18}" font-size="12">{label}</text>')
        for c, count in enumerate(counts):
            if count:
                colour = "#57606a" if label == "a ring" else "#1a7f37" if figure.get("ok") else "#cf222e"
                cells.append(
                    f'<rect x="{90 + CELL * c}" y="{y}" width="{CELL - 4}" height="24" fill="{colour}"/>'
                    f'<text x="{90 + CELL * c + 15}" y="{y + 17}" font-size="12" fill="#ffffff" '
                    f'text-anchor="middle">{count}</text>'
                )
    ticks = "".join(
        f'<text x="{90 + CELL * c + 15}" y="34" font-size="11" text-anchor="middle">{c}</text>'
        for c in range(len(rows[1][1]))
    )
    title = escape(f"matmuls by the number of transfers they wait for, on {figure.get('case', 'this case')}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(width, 480)}" height="110" role="img" '
        f'aria-label="{title}"><title>{title}</title>'
        f'<text x="0" y="12" font-size="12" font-weight="bold">{title}</text>{ticks}{"".join(cells)}</svg>'
    )


# ---------------------------------------------------------------- a ring, step by step

STEP, ROW, LEFT = 56, 24, 70
NEIGHBOUR, FAR, EXCHANGE, MATMUL = "#57606a", "#cf222e", "#8c959f", "#0969da"


def _ring(figure: RingFigure) -> str:
    """Steps across, devices down. At each step an arrow from each sending device to the one it
    sends to, labelled with whose inputs it carries (an arrow past a neighbour is red); between
    steps a blue square where a device runs a matmul that could start there."""
    devices, steps = int(figure["devices"]), figure["steps"]
    kinds = figure.get("kinds", ["collective-permute"] * len(steps))
    unlabelled: list[list[list[int]]] = [[[] for _ in pairs] for pairs in steps]
    carried = figure.get("carried", unlabelled)
    far = {(int(i), int(s), int(t)) for i, s, t in figure["far"]}
    top = 44

    def x(slot: int) -> int:
        return LEFT + STEP * slot

    def y(device: int) -> int:
        return top + ROW * device + ROW // 2

    rows = "".join(
        f'<text x="0" y="{y(d) + 4}" font-size="11">device {d}</text>'
        f'<line x1="{x(0)}" y1="{y(d)}" x2="{x(len(steps))}" y2="{y(d)}" stroke="#d0d7de"/>'
        for d in range(devices)
    )
    ticks = "".join(
        f'<text x="{x(i) + STEP // 2}" y="{top - 6}" font-size="11" text-anchor="middle">{i + 1}</text>'
        for i in range(len(steps))
    )
    arrows = [
        _arrow(i, int(s), int(t), origins, kinds[i], (i, int(s), int(t)) in far, x, y, devices)
        for i, pairs in enumerate(steps)
        for (s, t), origins in zip(pairs, carried[i])
    ]
    squares = [
        _matmul(slot, d, read, len(steps), x(slot), y(d), devices)
        for slot, reads in enumerate(figure.get("computes", []))
        for d, read in enumerate(reads)
        if read is not None
    ]
    markers = "".join(
        f'<marker id="{cls}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" '
        f'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="{colour}"/></marker>'
        for cls, colour in (("near", NEIGHBOUR), ("far", FAR), ("exchange", EXCHANGE))
    )
    said = f"what each device sends and multiplies at each step, on {figure.get('case', 'this case')}"
    title = escape(said)
    note = f"{len(far)} sends past a neighbour, in red" if far else "every send goes to a neighbour"
    if "all-to-all" in kinds:
        note = "an all-to-all: each device sends a piece to every other" + (f"; {note}" if far else "")
    key = "each arrow is labelled with the devices whose inputs it carries; a blue square is a matmul that could start there"
    height = top + ROW * devices + 40
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(x(len(steps)) + 20, 7 * len(said), 640)}" '
        f'height="{height}" role="img" aria-label="{title}"><title>{title}</title><defs>{markers}</defs>'
        f'<text x="0" y="12" font-size="12" font-weight="bold">{title}</text>'
        f'<text x="0" y="{top - 6}" font-size="11">step</text>{ticks}{rows}{"".join(arrows)}{"".join(squares)}'
        f'<text x="0" y="{height - 22}" font-size="11">{escape(note)}</text>'
        f'<text x="0" y="{height - 6}" font-size="11">{escape(key)}</text></svg>'
    )


def _arrow(step: int, s: int, t: int, origins: list[int], kind: str, wrong: bool, x: Any, y: Any, devices: int) -> str:
    """One send: a line from the source's row to the target's across the step, labelled at its
    head with whose inputs it carries; an all-to-all's many lines are drawn faint and unlabelled."""
    exchange = kind == "all-to-all"
    colour, cls = (FAR, "far") if wrong else (EXCHANGE, "exchange") if exchange else (NEIGHBOUR, "near")
    what = f", what was made from the inputs of {_devices(origins, devices)}" if origins else ""
    said = f"step {step + 1}: device {s} sends to device {t}" + (", past its neighbours" if wrong else "") + what
    x1, x2 = x(step) + 8, x(step + 1) - 10
    label = (
        f'<text class="carried" x="{x2 - 10}" y="{y(t) - 4}" font-size="9" text-anchor="end">'
        f"{escape(_short(origins, devices))}</text>"
        if origins and not exchange
        else ""
    )
    return (
        f'<line class="{cls}" x1="{x1}" y1="{y(s)}" x2="{x2}" y2="{y(t)}" stroke="{colour}" '
        f'stroke-width="{2.5 if wrong else 1.2}" stroke-opacity="{0.45 if exchange else 1}" '
        f'marker-end="url(#{cls})"><title>{escape(said)}</title></line>{label}'
    )


def _matmul(slot: int, device: int, read: list[int], steps: int, cx: int, cy: int, devices: int) -> str:
    when = "before the first step" if slot == 0 else f"after step {slot}" if slot < steps else "after the last step"
    said = f"{when}: device {device} runs a matmul on the inputs of {_devices(read, devices)}"
    return (
        f'<rect class="matmul" x="{cx - 5}" y="{cy - 5}" width="10" height="10" fill="{MATMUL}">'
        f"<title>{escape(said)}</title></rect>"
    )


def _devices(origins: list[int], devices: int) -> str:
    if len(origins) == devices:
        return "every device"
    return ("device " if len(origins) == 1 else "devices ") + ", ".join(map(str, origins))


def _short(origins: list[int], devices: int) -> str:
    """A label that fits an arrow: "3", "0,5", "0-3", "all"."""
    if len(origins) == devices:
        return "all"
    if len(origins) > 2 and origins == list(range(origins[0], origins[-1] + 1)):
        return f"{origins[0]}-{origins[-1]}"
    return ",".join(map(str, origins))


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
    width, height = max(cols * CELL * 1.6, 120), rows * CELL
    parts = [f'<text x="{x0}" y="12" font-size="12" font-weight="bold">{escape(title)}</text>']
    for copy in range(copies):
        dy = 20 + copy * (height + 10)
        for (r, *c), devices in sorted(held.items()):
            col = c[0] if c else 0
            mine = _copy_devices(devices, mesh, varying, copy)
            if not mine:
                continue
            x, y = x0 + col * width / cols, dy + r * CELL
            label = "dev " + ",".join(map(str, mine)) if len(mine) <= 4 else f"{len(mine)} devices"
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{width / cols:.1f}" height="{CELL}" '
                f'fill="{_colour(r * cols + col)}" stroke="#24292f"/>'
                f'<text x="{x + 4:.1f}" y="{y + 21}" font-size="11">{label}</text>'
            )
    return "".join(parts), width, 20 + copies * (height + 10)


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
    width, height = w1 + w2 + 60, max(h1, h2) + 10
    label = escape(f"output sharding on mesh {mesh}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" role="img" '
        f'aria-label="{label}"><title>{label}</title>{asked}{got}</svg>'
    )
