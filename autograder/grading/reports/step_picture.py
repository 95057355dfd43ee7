"""What each device sends and multiplies at each step (a ``RingFigure``), drawn as a grid.

Devices run down, the program's transfers across. Each step is a gutter of arrows, one per send,
followed by a column of cells, one per device: a cell names whose inputs made the block that just
arrived there, and is blue where a matmul could start (all it reads has arrived). Arrows live in
the gutters and labels in the cells, so no label ever sits on an arrow; a matmul that waits for
the last step shows as a column of blue cells at the end, so overlap, or its absence, is visible.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from ...core.records import RingFigure
from . import svg_text
from .svg_text import LABEL, text, width

GUTTER, ROW, HEIGHT = 34, 26, 20  # px: a step's arrows, a device's row, a cell
NEIGHBOUR, FAR, EXCHANGE = "#57606a", "#cf222e", "#8c959f"
MATMUL, MATMUL_EDGE, CELL_EDGE = "#b6e3ff", "#0969da", "#d0d7de"
TITLE = "What each device sends and multiplies, step by step"
_LEGEND_MARK = 40  # px: the sample of a mark before its words
# A step in which every device of a group sends to every other, drawn faint: what each kind does.
EXCHANGES = {
    "all-to-all": "an all-to-all: each device sends a piece to every other",
    "all-gather": "an all-gather (the library's): each device's block goes to every other",
    "all-reduce": "an all-reduce (the library's): every device's partial sums reach every other",
    "reduce-scatter": "a reduce-scatter (the library's): every device's partial sums of each block reach its owner",
    "collective-broadcast": "a broadcast (the library's): one device's block goes to every other",
}


def draw(figure: RingFigure) -> str:
    """The figure as inline SVG, every label escaped and none smaller than 11 px."""
    devices, steps = int(figure["devices"]), figure["steps"]
    kinds = figure.get("kinds", ["collective-permute"] * len(steps))
    carried = figure.get("carried")
    computes = figure.get("computes", [])
    far = {(int(i), int(s), int(t)) for i, s, t in figure["far"]}
    arrived = [_arrived(pairs, carried[i] if carried else None, devices) for i, pairs in enumerate(steps)]
    names = [_short(origins, devices) for step in arrived for origins in step.values()]
    cell = max([28.0] + [width(n) + 10 for n in names])
    left = width(f"device {devices - 1}") + 10
    head, head_width, top = svg_text.heading(TITLE, figure.get("case", "this case"))
    top += 24  # the step numbers

    def x(slot: int) -> float:  # a slot's cells: slot 0 before the first step, slot k after step k
        return left + slot * (cell + GUTTER)

    def y(device: int) -> float:
        return top + ROW * device + ROW / 2

    parts = [head, text(0, top - 8, "step")]
    for i in range(len(steps)):
        parts.append(text(x(i) + cell + GUTTER / 2, top - 8, str(i + 1), text_anchor="middle"))
    for d in range(devices):
        parts.append(text(0, y(d) + 4, f"device {d}"))
    for slot in range(len(steps) + 1):
        reads = computes[slot] if slot < len(computes) else [None] * devices
        for d in range(devices):
            origins = arrived[slot - 1].get(d) if slot else None
            parts.append(_cell(slot, d, x(slot), y(d), cell, origins, reads[d], len(steps), devices))
    for i, pairs in enumerate(steps):
        x0, x1 = x(i) + cell + 3, x(i + 1) - 4
        parts += [_arrow(i, int(s), int(t), kinds[i], (i, int(s), int(t)) in far, x0, x1, y) for s, t in pairs]
    bottom = y(devices - 1) + ROW
    legend, legend_width, legend_height = _legend(figure, far, kinds, computes, bottom, len(steps))
    markers = "".join(
        f'<marker id="{cls}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" '
        f'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="{colour}"/></marker>'
        for cls, colour in (("near", NEIGHBOUR), ("far", FAR), ("exchange", EXCHANGE))
    )
    body = f"<defs>{markers}</defs>{''.join(parts)}{legend}"
    wide = max(x(len(steps)) + cell + 10, head_width + 10, legend_width + 10)
    return svg_text.svg(wide, bottom + legend_height, f"{TITLE}, on {figure.get('case', 'this case')}", body)


def text_grid(figure: RingFigure) -> str:
    """The same grid for a terminal: a column per step, whose block arrived in each device's
    cell, ``*`` where a matmul could start, ``!`` after a block that came past a neighbour."""
    devices, steps = int(figure["devices"]), figure["steps"]
    carried, computes = figure.get("carried"), figure.get("computes", [])
    far = {(int(i), int(t)) for i, _, t in figure["far"]}
    arrived = [_arrived(pairs, carried[i] if carried else None, devices) for i, pairs in enumerate(steps)]

    def cell(slot: int, d: int) -> str:
        got = arrived[slot - 1].get(d) if slot else None
        said = "" if got is None else _short(got, devices) or "?"
        said += "!" if slot and (slot - 1, d) in far else ""
        reads = computes[slot] if slot < len(computes) else []
        return said + ("*" if d < len(reads) and reads[d] is not None else "")

    grid = [["step", "start", *map(str, range(1, len(steps) + 1))]]
    grid += [[f"device {d}", *(cell(slot, d) for slot in range(len(steps) + 1))] for d in range(devices)]
    widths = [max(len(row[i]) for row in grid) for i in range(len(grid[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in grid]
    key = "each cell: whose inputs made the block that arrived; * a matmul could start there"
    key += "; ! it came past a neighbour" if far else ""
    summary = _overlap(computes, len(steps))
    return "\n".join([f"{TITLE}, on {figure.get('case', 'this case')}:", *lines, key, *filter(None, [summary])])


def _arrived(pairs: list[list[int]], carried: list[list[int]] | None, devices: int) -> dict[int, list[int]]:
    """Per receiving device, whose inputs made what it received at this step ([] where unknown)."""
    got: dict[int, set[int]] = {}
    for k, (_, t) in enumerate(pairs):
        got.setdefault(int(t), set()).update(carried[k] if carried else [])
    return {t: sorted(origins) for t, origins in got.items()}


def _cell(
    slot: int,
    device: int,
    cx: float,
    cy: float,
    cell: float,
    origins: list[int] | None,
    read: list[int] | None,
    steps: int,
    devices: int,
) -> str:
    """One device's cell after one step: whose block arrived, blue where a matmul could start."""
    rect = f'x="{cx:.1f}" y="{cy - HEIGHT / 2:.1f}" width="{cell:.1f}" height="{HEIGHT}"'
    if read is not None:
        when = "before the first step" if slot == 0 else f"after step {slot}" if slot < steps else "after the last step"
        said = f"{when}: device {device} runs a matmul on the inputs of {_devices(read, devices)}"
        out = (
            f'<rect class="matmul" {rect} rx="3" fill="{MATMUL}" stroke="{MATMUL_EDGE}">'
            f"<title>{escape(said)}</title></rect>"
        )
    elif origins is not None:
        out = f'<rect {rect} rx="3" fill="#ffffff" stroke="{CELL_EDGE}"/>'
    else:
        return ""
    if origins:
        out += text(cx + cell / 2, cy + 4, _short(origins, devices), text_anchor="middle", css_class="carried")
    return out


def _arrow(step: int, s: int, t: int, kind: str, wrong: bool, x0: float, x1: float, y: Callable[[int], float]) -> str:
    """One send, across its step's gutter from the sender's row to the receiver's cell."""
    exchange = kind != "collective-permute"
    colour, cls = (FAR, "far") if wrong else (EXCHANGE, "exchange") if exchange else (NEIGHBOUR, "near")
    said = f"step {step + 1}: device {s} sends to device {t}" + (", past its neighbours" if wrong else "")
    return (
        f'<line class="{cls}" x1="{x0:.1f}" y1="{y(s):.1f}" x2="{x1:.1f}" y2="{y(t):.1f}" stroke="{colour}" '
        f'stroke-width="{2.5 if wrong else 1.3}" stroke-opacity="{0.45 if exchange else 1}" '
        f'marker-end="url(#{cls})"><title>{escape(said)}</title></line>'
    )


def _legend(
    figure: RingFigure,
    far: set[tuple[int, int, int]],
    kinds: list[str],
    computes: list[list[list[int] | None]],
    top: float,
    steps: int,
) -> tuple[str, float, float]:
    """A line for every kind of mark the picture holds, each beside a sample of it; then what
    the picture shows of its sends and its overlap. Returns the elements, width and height."""
    lines: list[tuple[str, str]] = []
    if "collective-permute" in kinds and len(far) < sum(len(p) for p in figure["steps"]):
        lines.append((_sample_arrow("near", NEIGHBOUR), "a send to a neighbour on the mesh"))
    if far:
        lines.append((_sample_arrow("far", FAR, 2.5), f"a send past a neighbour, in red ({len(far)} of them)"))
    lines += [(_sample_arrow("exchange", EXCHANGE), said) for kind, said in EXCHANGES.items() if kind in kinds]
    if figure.get("carried"):
        lines.append((_sample_cell("#ffffff", CELL_EDGE, "3"), "a block that arrived, made from device 3's inputs"))
    if any(read is not None for slot in computes for read in slot):
        lines.append((_sample_cell(MATMUL, MATMUL_EDGE, ""), "a matmul could start here: all it reads has arrived"))
    summary = _overlap(computes, steps)
    out, row = [], 20.0
    for i, (mark, words) in enumerate(lines):
        cy = top + 14 + row * i
        out.append(f'<g transform="translate(0,{cy - 10:.1f})">{mark}</g>' + text(_LEGEND_MARK + 6, cy + 4, words))
    if summary:
        out.append(text(0, top + 14 + row * len(lines) + 4, summary, font_weight="bold"))
        lines.append(("", summary))
    widest = max([_LEGEND_MARK + 6 + width(words, bold=words == summary) for _, words in lines], default=0.0)
    return "".join(out), widest, 14 + row * len(lines) + 6


def _sample_arrow(cls: str, colour: str, stroke: float = 1.3) -> str:
    return (
        f'<line x1="2" y1="10" x2="{_LEGEND_MARK - 6}" y2="10" stroke="{colour}" '
        f'stroke-width="{stroke}" marker-end="url(#{cls})"/>'
    )


def _sample_cell(fill: str, edge: str, label: str) -> str:
    return f'<rect x="4" y="0" width="28" height="{HEIGHT}" rx="3" fill="{fill}" stroke="{edge}"/>' + (
        text(18, 14, label, LABEL, text_anchor="middle") if label else ""
    )


def _overlap(computes: list[list[list[int] | None]], steps: int) -> str:
    """What the blue cells show: matmuls spread over the steps overlap the sends; all after the
    last step, none does."""
    slots = [i for i, slot in enumerate(computes) if any(read is not None for read in slot)]
    if not slots or not steps:
        return ""
    if slots == [steps]:
        return "every matmul waits for the last step: no transfer runs under a matmul"
    if len(slots) == steps + 1:
        return "a matmul can start in every column: each transfer can run under a matmul"
    return f"matmuls can start in {len(slots)} of {steps + 1} columns: only some transfers run under a matmul"


def _devices(origins: list[int], devices: int) -> str:
    if len(origins) == devices:
        return "every device"
    return ("device " if len(origins) == 1 else "devices ") + ", ".join(map(str, origins))


def _short(origins: list[int], devices: int) -> str:
    """A label that fits a cell: "3", "0,5", "0-3", "all", "all but 2"."""
    if len(origins) == devices:
        return "all"
    if devices > 3 and len(origins) == devices - 1:
        return f"all but {next(d for d in range(devices) if d not in origins)}"
    if len(origins) > 2 and origins == list(range(origins[0], origins[-1] + 1)):
        return f"{origins[0]}-{origins[-1]}"
    return ",".join(map(str, origins))
