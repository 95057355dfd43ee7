"""``jaxcourse report ASSIGNMENT``: the class at a glance, from what ``jaxcourse grade`` wrote."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from autograder import specs
from autograder.core.course import Course
from autograder.core.files import write_atomic
from autograder.grading.record.recorder import results_dir
from classroom.classdir import ClassDir
from classroom.hub.class_page import class_view

from .args import Subparsers, class_option


def register(sub: Subparsers) -> None:
    p = sub.add_parser("report", help="the class at a glance: scores, parts, why points were lost")
    p.add_argument("assignment")
    p.add_argument("--out", type=Path, help="where jaxcourse grade wrote the results (default: the course's)")
    class_option(p, "a hub's class directory: its graded/ folder, and submissions over time from its exchange")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of writing the page")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    specs.get(args.assignment)  # an unknown name fails here, with the known ones
    classdir = ClassDir.open(args.class_dir) if args.class_dir is not None else None
    checkout, out = _results(args, classdir)
    view = class_view(checkout, out, args.assignment, classdir)
    if args.json:
        print(json.dumps(view.to_json(), indent=1))
        return 0
    page = out / "report.html"
    write_atomic(page, view.to_html())
    report = view.report
    graded = report.statuses.get("graded", 0)
    print(f"{report.students} students, {graded} graded; the report: {page}")
    if report.unreadable:
        print(f"results that could not be read (grade again): {', '.join(report.unreadable)}")
    if view.timeline and view.timeline.not_submitted:
        print(f"not submitted: {', '.join(view.timeline.not_submitted)}")
    if report.first_look:
        first = report.first_look
        print(f"look at first: {first.part}, {first.kind} ({first.students} of {graded} graded students)")
    return 0


def _results(args: argparse.Namespace, classdir: ClassDir | None) -> tuple[Course | None, Path]:
    """The checkout, where one is needed, and where the results are: ``--out`` alone names the
    results and needs no checkout (a copy of them, read anywhere)."""
    if args.out is not None and classdir is None:
        return None, args.out
    checkout = Course.find()
    return checkout, args.out or results_dir(classdir.course(checkout) if classdir else checkout, args.assignment)
