"""The class report's hub sections, drawn from a ``Timeline``: submissions over time as a step
line with the due date marked, time from a first submission to full marks, and who has not
submitted (yet, or at all once the due date has passed)."""

from __future__ import annotations

import datetime
from html import escape

from autograder.grading.reports.class_report_html import WIDTH

from .class_timeline import Timeline

HEIGHT, PAD = 160, 40


def to_html(t: Timeline) -> str:
    median = t.median_to_full_marks
    reached = sum(1 for s in t.to_full_marks.values() if s is not None)
    waiting = "Did not submit by the due date" if t.past_due else "Not submitted yet"
    due = f"due {escape(t.due)}" if t.due else "no due date"
    return f"""<h2>Submissions over time</h2>
<p>{len(t.arrivals)} submissions from {len(t.to_full_marks)} students; {due}.</p>
{arrivals(t)}
<h2>From a first submission to full marks</h2>
<p>{reached} of {len(t.to_full_marks)} students who submitted reached full marks{
        f"; the median took {_duration(median)}" if median is not None else ""
    }.</p>
{_full_marks_table(t)}
<h2>Who has not submitted</h2>
<p>{waiting} ({len(t.not_submitted)} of the roster's {t.roster} students): {
        ", ".join(escape(s) for s in t.not_submitted) or "no one"
    }.
{f"Late: {', '.join(escape(s) for s in t.late)}." if t.late else ""}</p>"""


def arrivals(t: Timeline) -> str:
    """The number of submissions so far, as a step line over time, the due date a dashed line."""
    if not t.arrivals:
        return "<p>No submissions yet.</p>"
    times = [_seconds(a.at) for a in t.arrivals]
    marks = times + ([_seconds(t.due)] if t.due else [])
    start, end = min(marks), max(marks)
    span = (end - start) or 1.0

    def x(when: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * (when - start) / span

    def y(count: int) -> float:
        return 10 + HEIGHT - HEIGHT * count / len(times)

    points = [f"{x(start):.1f},{y(0):.1f}"]
    for i, when in enumerate(times, 1):
        points += [f"{x(when):.1f},{y(i - 1):.1f}", f"{x(when):.1f},{y(i):.1f}"]
    due = ""
    if t.due:
        at = x(_seconds(t.due))
        due = (
            f'<line x1="{at:.1f}" y1="10" x2="{at:.1f}" y2="{HEIGHT + 10}" stroke="#cf222e" stroke-dasharray="4"/>'
            f'<text x="{at:.1f}" y="{HEIGHT + 24}" text-anchor="middle" font-size="11">due</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT + 40}" role="img">'
        f"<title>submissions so far, over time ({len(times)} in all)</title>"
        f'<polyline fill="none" stroke="#0969da" stroke-width="2" points="{" ".join(points)}"/>{due}'
        f'<text x="{PAD}" y="{HEIGHT + 24}" font-size="11">{escape(_minute(start))}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT + 24}" text-anchor="end" font-size="11">{escape(_minute(end))}</text>'
        f'<text x="{PAD - 4}" y="{HEIGHT + 10}" text-anchor="end" font-size="11">0</text>'
        f'<text x="{PAD - 4}" y="14" text-anchor="end" font-size="11">{len(times)}</text></svg>'
    )


def _full_marks_table(t: Timeline) -> str:
    rows = "".join(
        f"<tr><td>{escape(s)}</td><td>{'not yet' if sec is None else _duration(sec)}</td></tr>"
        for s, sec in sorted(t.to_full_marks.items(), key=lambda kv: (kv[1] is None, kv[1] or 0.0, kv[0]))
    )
    return f"<table><tr><th>student</th><th>time to full marks</th></tr>{rows}</table>"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _minute(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _seconds(iso: str) -> float:
    return datetime.datetime.fromisoformat(iso).timestamp()
