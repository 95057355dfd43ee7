"""``jaxcourse report ASSIGNMENT``: the class at a glance, from what ``jaxcourse grade`` wrote."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import specs
from ..core.course import Course
from ..core.files import write_atomic
from ..delivery.classdir import ClassDir
from ..grading.class_report import read_reports, summarise
from ..grading.class_report_html import to_html
from ..grading.classroom import results_dir
from .args import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("report", help="the class at a glance: scores, parts, why points were lost")
    p.add_argument("assignment")
    p.add_argument("--out", type=Path, help="where jaxcourse grade wrote the results (default: the course's)")
    p.add_argument("--class", dest="class_dir", type=Path, help="a class directory (its graded/ folder)")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of writing the page")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    specs.get(args.assignment)  # an unknown name fails here, with the known ones
    out = args.out or results_dir(_course(args.class_dir), args.assignment)
    report = summarise(args.assignment, read_reports(out, args.assignment))
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
        return 0
    page = out / "report.html"
    write_atomic(page, to_html(report))
    graded = report.statuses.get("graded", 0)
    print(f"{report.students} students, {graded} graded; the report: {page}")
    if report.unreadable:
        print(f"results that could not be read (grade again): {', '.join(report.unreadable)}")
    if report.first_look:
        first = report.first_look
        print(f"look at first: {first.part}, {first.kind} ({first.students} of {graded} graded students)")
    return 0


def _course(class_dir: Path | None) -> Course:
    """The course whose graded/ folder holds the results: a class's, or the checkout's."""
    course = Course.find()
    return ClassDir.open(class_dir).course(course) if class_dir is not None else course
