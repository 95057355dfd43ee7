"""The class report as one self-contained HTML page: the score distribution and each part's pass
rate drawn as inline SVG, the reasons for lost points in a table, every text escaped (a reason's
example is a student's own error message)."""

from __future__ import annotations

from html import escape

from ...core.records import CostRecord
from .class_report import ClassReport, PartStats, Reason
from .leaderboard import Leaderboard
from .scale_view import MODEL

BINS = 10
WIDTH, BAR, LABEL = 560, 18, 250
STYLE = """body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#1f2328}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f6f8fa}.look{border-left:4px solid #bf8700;background:#fff8c5;padding:8px 12px}
code{font-size:90%}"""


def to_html(report: ClassReport, more: str = "") -> str:
    """The page; ``more``: sections only a hub's class has (its timeline), already HTML."""
    graded = report.statuses.get("graded", 0)
    first = report.first_look
    look = (
        f'<p class="look"><b>Look at first:</b> {escape(first.part)}, {escape(first.kind)}: '
        f"{first.students} of {graded} graded students. For example: <code>{escape(first.example)}</code></p>"
        if first
        else "<p>No part lost points.</p>"
    )
    statuses = ", ".join(f"{n} {escape(s)}" for s, n in sorted(report.statuses.items()))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{escape(report.assignment)}: the class</title>
<style>{STYLE}</style></head><body>
<h1>{escape(report.assignment)}: the class at a glance</h1>
<p>{report.students} students: {statuses}.</p>
{look}
<h2>Scores</h2>
{histogram(report.scores, report.max_score)}
<h2>Parts</h2>
{pass_rates(report.parts)}
{_parts_table(report.parts)}
<h2>Why points were lost</h2>
{_reasons_table(report.reasons, "part")}
<h2>Notebooks that could not be graded</h2>
{_reasons_table(report.not_graded, "status") if report.not_graded else "<p>None.</p>"}
{_unreadable(report.unreadable)}
{_leaderboard(report.leaderboard) if report.leaderboard else ""}
{more}
</body></html>
"""


def histogram(scores: list[float], maximum: float) -> str:
    """Students per tenth of the maximum score (the last bin holds full marks)."""
    counts = [0] * BINS
    for score in scores if maximum else []:
        counts[min(BINS - 1, int(BINS * score / maximum))] += 1
    tallest, height, step = max(counts, default=0) or 1, 160, WIDTH // BINS
    bars = []
    for i, count in enumerate(counts):
        h = height * count / tallest
        bars.append(
            f'<rect x="{i * step + 2}" y="{20 + height - h:.1f}" width="{step - 4}" height="{h:.1f}" '
            f'fill="#0969da"><title>{count} students</title></rect>'
            f'<text x="{i * step + step / 2}" y="{16 + height - h:.1f}" text-anchor="middle" '
            f'font-size="11">{count}</text>'
            f'<text x="{i * step + step / 2}" y="{height + 36}" text-anchor="middle" font-size="11">'
            f"{i * maximum / BINS:g}-{(i + 1) * maximum / BINS:g}</text>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height + 60}" role="img">'
        f"<title>students per score band, out of {maximum:g}</title>{''.join(bars)}</svg>"
    )


def pass_rates(parts: list[PartStats]) -> str:
    """A bar per part: the share of graded students who kept its points."""
    rows = []
    for i, part in enumerate(parts):
        y, w = i * (BAR + 6), (WIDTH - LABEL - 50) * part.share_passed
        rows.append(
            f'<text x="{LABEL - 6}" y="{y + 13}" text-anchor="end" font-size="12">{escape(part.name)}</text>'
            f'<rect x="{LABEL}" y="{y}" width="{w:.1f}" height="{BAR}" fill="#1a7f37"/>'
            f'<text x="{LABEL + w + 4:.1f}" y="{y + 13}" font-size="12">{part.share_passed:.0%}</text>'
        )
    height = len(parts) * (BAR + 6) + 4
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img">'
        f"<title>share of students who passed each part</title>{''.join(rows)}</svg>"
    )


def _parts_table(parts: list[PartStats]) -> str:
    rows = "".join(
        f"<tr><td>{escape(p.name)}</td><td>{p.max_score:g}</td><td>{p.passed} of {p.graded}</td>"
        f"<td>{p.mean_score:.2f}</td><td>{'' if p.discrimination is None else f'{p.discrimination:.2f}'}</td></tr>"
        for p in parts
    )
    return (
        "<table><tr><th>part</th><th>points</th><th>passed</th><th>mean</th>"
        f'<th title="correlation of the part\'s score with the rest of the assignment">discrimination</th></tr>'
        f"{rows}</table>"
    )


def _reasons_table(reasons: list[Reason], first: str) -> str:
    rows = "".join(
        f"<tr><td>{escape(r.part or r.kind)}</td><td>{escape(r.kind if r.part else '')}</td><td>{r.students}</td>"
        f"<td><code>{escape(r.example)}</code></td></tr>"
        for r in reasons
    )
    return f"<table><tr><th>{first}</th><th>kind</th><th>students</th><th>example</th></tr>{rows}</table>"


def _unreadable(students: list[str]) -> str:
    if not students:
        return ""
    names = ", ".join(escape(s) for s in students)
    return f"<p><b>Results that could not be read</b> (grade these students again): {names}</p>"


def _leaderboard(board: Leaderboard) -> str:
    """The correct submissions, fastest first, each with its time per function and what its
    program spends there per device (its signature)."""
    reference = f" The reference: {_ms(board.reference)}." if board.reference is not None else ""
    head = "".join(f"<th>{escape(name)}</th>" for name in board.functions)
    rows = "".join(
        f"<tr><td>{e.rank}</td><td>{escape(e.shown)}</td><td>{_ms(e.seconds)}</td>"
        + "".join(
            f"<td>{_ms(e.functions[name])}<br><small>{escape(_signature(e.signature[name]))}</small></td>"
            for name in board.functions
        )
        + "</tr>"
        for e in board.entries
    )
    left = f" {board.unranked} graded submissions are not ranked: a part lost its points." if board.unranked else ""
    if board.doubtful:
        left += (
            f" {board.doubtful} correct submissions are not ranked as doubtful: a program at scale did less "
            "than half the reference's work, which its graded cases never showed."
        )
    return (
        f"<h2>Leaderboard</h2><p>Correct submissions by their programs' time at a realistic size on "
        f"{escape(board.machine)}, {escape(MODEL)}.{reference}{left}</p>"
        f'<table class="leaderboard"><tr><th>rank</th><th>who</th><th>time</th>{head}</tr>{rows}</table>'
        if board.entries
        else f"<h2>Leaderboard</h2><p>No correct submission yet.{left}</p>"
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.3f} ms"


def _signature(cost: CostRecord) -> str:
    sent = ", ".join(f"{axes} {b / 2**20:,.0f} MiB" for axes, b in cost["traffic"].items()) or "nothing"
    return f"{cost['flops'] / 1e9:,.1f} GFLOP, HBM {cost['hbm_bytes'] / 2**20:,.0f} MiB, sends {sent}"
