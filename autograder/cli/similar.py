"""``jaxcourse similar ASSIGNMENT``: students whose programs are alike, from what grading kept."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from .. import specs
from ..core.course import Course
from ..core.files import write_atomic
from ..delivery.classdir import ClassDir
from ..grading import similarity
from ..grading.class_report import read_reports
from ..grading.classroom import results_dir
from .args import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("similar", help="pairs of students whose exported programs are alike (for a person to read)")
    p.add_argument("assignment")
    p.add_argument("--out", type=Path, help="where jaxcourse grade wrote the results (default: the course's)")
    p.add_argument("--submissions", type=Path, help="the notebooks, to show each pair's cells (default: the course's)")
    p.add_argument("--class", dest="class_dir", type=Path, help="a class directory (its graded/ and submitted/)")
    p.add_argument("--threshold", type=float, default=similarity.THRESHOLD,
                   help="the share of a program two students must have in common (default %(default)s)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the pairs as JSON instead of writing the page")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    assignment = specs.get(args.assignment)
    course = Course.find()
    if args.class_dir is not None:
        course = ClassDir.open(args.class_dir).course(course)
    out = args.out or results_dir(course, assignment.name)
    submitted = args.submissions or course.nbgrader_root / "submitted"
    reports = [r for r in read_reports(out, assignment.name).reports if r.status == "graded"]
    reference = similarity.reference_programs(assignment, course)
    pairs = similarity.similar_pairs(reports, reference, args.threshold)
    if args.json:
        print(json.dumps([{"students": list(p.students), "alike": [asdict(a) for a in p.alike]} for p in pairs]))
        return 0

    def source(student: str, function: str) -> str:
        return similarity.solution_cell(submitted / student / assignment.name / assignment.notebook, function)

    page = out / "similar.html"
    write_atomic(page, similarity.to_html(assignment.name, pairs, source))
    print(f"{len(pairs)} pairs of {len(reports)} graded students; the evidence side by side: {page}")
    for pair in pairs:
        print(similarity.line(pair))
    return 0
