"""Text in the feedback's SVG pictures: how wide a line is, and a figure's heading.

An SVG cannot wrap or measure its text, so each picture is made wide enough for its longest line
by an estimate that errs wide (tested in chromium: every text fits its picture); a long case
label goes on a line of its own under the title.
"""

from __future__ import annotations

from html import escape

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
TITLE, LABEL = 13, 11  # font sizes in px: no text of a picture is smaller than LABEL
_EM = {False: 0.64, True: 0.72}  # a wide estimate of a character's advance, in ems (DejaVu Sans)


def width(text: str, size: int = LABEL, bold: bool = False) -> float:
    """An upper estimate of the width of ``text`` in px."""
    return len(text) * size * _EM[bold]


def text(x: float, y: float, said: str, size: int = LABEL, css_class: str = "", **attributes: str) -> str:
    """One escaped ``<text>`` element; ``font_weight="bold"`` is written ``font-weight``."""
    if css_class:
        attributes["class"] = css_class
    extra = "".join(f' {name.replace("_", "-")}="{escape(value)}"' for name, value in attributes.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}"{extra}>{escape(said)}</text>'


def heading(title: str, case: str) -> tuple[str, float, float]:
    """The title in bold, and on the line under it the case it was drawn on: the elements, the
    width they need and the height they take."""
    on = f"on {case}"
    parts = text(0, 15, title, TITLE, font_weight="bold") + text(0, 32, on, LABEL, fill="#57606a")
    return parts, max(width(title, TITLE, True), width(on)), 40


def svg(width_px: float, height_px: float, label: str, body: str) -> str:
    """The picture: its size, its accessible name and its elements, in the pictures' font."""
    said = escape(label)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_px:.0f}" height="{height_px:.0f}" '
        f'font-family="{FONT}" role="img" aria-label="{said}"><title>{said}</title>{body}</svg>'
    )
