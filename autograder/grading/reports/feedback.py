"""Per-student feedback in Markdown and HTML: what passed, what failed, and what to look at,
with a picture where one helps (where an output's blocks live; bytes moved against the minimum).

Hidden tests appear by name and verdict only: neither their source nor their cases (meshes,
shapes, dtypes) leave the instructor.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.files import write_atomic
from ...specs import ASSIGNMENTS
from . import figures, scale_view, signature_view
from .figures import svg
from .leaderboard import doubts

if TYPE_CHECKING:
    from ...core.records import Standing, TestResult
    from ..submission.report import Report

_STATUS_NOTE = {
    "graded": "",
    "error": "Your notebook raised an error before any function could be graded.",
    "timeout": "Your notebook did not finish in time; look for loops that never end.",
    "crashed": "Your notebook's process died before it could be graded.",
    "invalid": "Your notebook could not be read.",
}


def markdown(report: Report) -> str:
    lines = [
        f"# {report.assignment}: feedback for {report.student}",
        "",
        f"**Score: {report.score:g} / {report.max_score:g}**",
    ]
    if report.status != "graded":
        lines += ["", f"{_STATUS_NOTE.get(report.status, '')} {report.message}".strip()]
    lines += ["", "| test | points | status | what to look at |", "| --- | --- | --- | --- |"]
    for t in report.tests:
        message = _message(report.assignment, t).replace("|", "\\|").replace("\n", " ") + _detail_markdown(t)
        name = t.name + (" (hidden)" if t.visibility == "hidden" else "")
        lines.append(f"| {name} | {t.score:g}/{t.max_score:g} | {t.status} | {message} |")
    signatures = signature_view.text(report.tests)
    if signatures:
        lines += ["", "What each program spends per device, beside the reference's:", "", "```", signatures, "```"]
    pictures = figures.text(report.tests)
    if pictures:
        lines += ["", "What each device does, step by step:", "", "```", pictures, "```"]
    projected = scale_view.text(report.at_scale)
    if projected:
        lines += ["", "## At scale", "", "```", projected, "```"]
    place = _place(report)
    if place:
        lines += ["", place]
    return "\n".join(lines) + "\n"


def _place(report: Report) -> str:
    """Her place on the class's board as her feedback was written, or why a correct submission
    is not ranked; "" for neither."""
    return standing(report.standing) if report.standing is not None else doubts(report)


def standing(place: Standing) -> str:
    """Her rank among the class's correct submissions so far, in one sentence."""
    reference = f", the reference's {place.reference * 1e3:.3f} ms" if place.reference is not None else ""
    return (
        f"Leaderboard: your programs at scale would take {place.seconds * 1e3:.3f} ms on {place.machine} "
        f"(the model above); you rank {place.rank} of the {place.of} correct submissions so far "
        f"(the fastest {place.fastest * 1e3:.3f} ms{reference})."
    )


def to_html(report: Report) -> str:
    rows = "\n".join(
        f"<tr class='{t.status}'><td>{html.escape(t.name)}"
        f"{' <em>(hidden)</em>' if t.visibility == 'hidden' else ''}</td>"
        f"<td>{t.score:g}/{t.max_score:g}</td><td>{t.status}</td><td>{html.escape(_message(report.assignment, t))}"
        f"{detail_html(t)}{_picture(t)}{_signature(t)}</td></tr>"
        for t in report.tests
    )
    note = ""
    if report.status != "graded":
        note = f"<p class='status'>{html.escape(_STATUS_NOTE.get(report.status, ''))} {html.escape(report.message)}</p>"
    title = html.escape(f"{report.assignment}: feedback for {report.student}")
    place = _place(report)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }}
table.signature, table.scale {{ margin-top: .5em; font-size: 90%; }}
table.signature caption, table.scale caption {{ text-align: left; }}
tr.passed td:nth-child(3) {{ color: #1a7f37; }} tr.failed td:nth-child(3), tr.error td:nth-child(3) {{ color: #cf222e; }}
</style></head><body>
<h1>{title}</h1>
<p><strong>Score: {report.score:g} / {report.max_score:g}</strong></p>
{note}
<table><thead><tr><th>test</th><th>points</th><th>status</th><th>what to look at</th></tr></thead>
<tbody>
{rows}
</tbody></table>
{scale_view.to_html(report.at_scale)}
{f"<p class='standing'>{html.escape(place)}</p>" if place else ""}
</body></html>
"""


def _message(assignment: str, test: TestResult) -> str:
    """A hidden test says only whether it passed and what its cases change (its task's words):
    its own message would describe its cases."""
    if test.visibility != "hidden":
        return test.message
    if test.status == "passed":
        return ""
    tasks = ASSIGNMENTS[assignment].tasks if assignment in ASSIGNMENTS else ()
    task = next((t for t in tasks if t.grade_id == test.grade_id), None)
    return task.hidden_hint() if task else "a hidden case fails; your visible cases pass, so look at what changes"


def _detail_lines(test: TestResult) -> list[str]:
    """Where a visible part's wrong values differ, and how (``TestResult.detail``), escaped; a
    hidden part shows none."""
    if test.visibility == "hidden" or not test.detail:
        return []
    return [html.escape(line) for line in test.detail.splitlines()]


def _detail_markdown(test: TestResult) -> str:
    lines = _detail_lines(test)
    return "".join(f"<br>{line.replace('|', '&#124;')}" for line in lines)


def detail_html(test: TestResult) -> str:
    """The detail as a preformatted block, for the feedback's table and check()'s."""
    body = "\n".join(_detail_lines(test))
    return f"<pre class='detail'>{body}</pre>" if body else ""


def _picture(test: TestResult) -> str:
    if test.visibility == "hidden" or not test.figure:
        return ""
    return f"<div class='figure'>{svg(test.figure)}</div>"


def _signature(test: TestResult) -> str:
    """The technique part's case: what the program spends beside the reference's."""
    return signature_view.to_html(test.signature) if test.signature and test.visibility != "hidden" else ""


def write(directory: Path, report: Report) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / "feedback.md", markdown(report))
    write_atomic(directory / "feedback.html", to_html(report))
