"""``jaxcourse similar ASSIGNMENT``: students whose programs are alike, from what grading kept, or
whose cells read alike, from the notebooks they handed in."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from autograder import specs
from autograder.core.course import Course
from autograder.core.files import write_atomic
from autograder.core.tasks import Assignment
from autograder.grading.record.recorder import results_dir
from autograder.grading.reports import similarity, source_similarity
from autograder.grading.reports.class_report import read_reports
from classroom.classdir import ClassDir

from .args import Subparsers, class_option, share


def register(sub: Subparsers) -> None:
    p = sub.add_parser("similar", help="pairs of students whose programs or cells are alike (for a person to read)")
    p.add_argument("assignment")
    p.add_argument("--out", type=Path, help="where jaxcourse grade wrote the results (default: the course's)")
    p.add_argument("--submissions", type=Path, help="the notebooks, to show each pair's cells (default: the course's)")
    class_option(p, "a class directory (its graded/ and submitted/)")
    p.add_argument(
        "--threshold",
        type=share,
        default=similarity.THRESHOLD,
        help="the share of a program two students must have in common (default %(default)s)",
    )
    p.add_argument(
        "--text-threshold",
        type=share,
        default=source_similarity.THRESHOLD,
        help="the share of one student's cell found in the other's (default %(default)s)",
    )
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
    functions = [t.name for t in assignment.tasks]
    cells = {
        r.student: similarity.solution_cells(submitted / r.student / assignment.name / assignment.notebook, functions)
        for r in reports
    }
    reference = similarity.reference_programs(assignment, course)
    pairs = similarity.with_text(
        similarity.similar_pairs(reports, reference, args.threshold),
        source_similarity.alike_cells(cells, _release_text(course, assignment), args.text_threshold),
    )
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "students": list(p.students),
                        "alike": [asdict(a) for a in p.alike],
                        "text": [asdict(t) for t in p.text],
                    }
                    for p in pairs
                ]
            )
        )
        return 0
    page = out / "similar.html"
    write_atomic(page, similarity.to_html(assignment.name, pairs, cells))
    print(f"{len(pairs)} pairs of {len(reports)} graded students; the evidence side by side: {page}")
    for pair in pairs:
        print(similarity.line(pair))
    return 0


def _release_text(course: Course, assignment: Assignment) -> str:
    """What every student was given, set aside when comparing cells; without a release, the
    class's common passages are still set aside, and one line says so."""
    notebook = course.nbgrader_root / "release" / assignment.name / assignment.notebook
    if not notebook.is_file():
        print(
            f"jaxcourse similar: no release at {notebook}; the given text is set aside only where much of the "
            f"class shares it (run `jaxcourse release {assignment.name}` to set it all aside)",
            file=sys.stderr,
        )
        return ""
    return source_similarity.release_text(notebook)
