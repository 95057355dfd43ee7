"""``jaxcourse release-feedback ASSIGNMENT``: each student's feedback where they can fetch it."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder import specs
from autograder.core.course import Course
from classroom import feedback_release
from classroom.classdir import ClassDir

from .args import Subparsers, class_option


def register(sub: Subparsers) -> None:
    p = sub.add_parser("release-feedback", help="return graded feedback: nbgrader's layout, the exchange, or a zip")
    p.add_argument("assignment")
    class_option(p, "the class directory: feedback goes to its exchange")
    p.add_argument("--zip", type=Path, help="also write every student's feedback into this archive, for an LMS")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    notebook = Path(specs.get(args.assignment).notebook).stem
    classdir = ClassDir.open(args.class_dir) if args.class_dir else None
    root = classdir.root if classdir else Course.find().nbgrader_root
    pages = feedback_release.graded_pages(root / "graded" / args.assignment)
    feedback_release.to_nbgrader(pages, root, args.assignment, notebook)
    print(f"feedback for {len(pages)} students in {root / 'feedback'}")
    if classdir is not None:
        missing = feedback_release.to_exchange(pages, classdir.store, args.assignment, notebook)
        print(f"released to the class exchange: {len(pages) - len(missing)} students")
        for student in missing:
            print(f"  {student}: graded, but no submission of theirs in the exchange to file it under")
    if args.zip is not None:
        feedback_release.to_zip(pages, args.zip, notebook)
        print(f"wrote {args.zip}")
    return 0
