"""``jaxcourse release [ASSIGNMENT]``: nbgrader's generate_assignment, then a leak check."""

from __future__ import annotations

import argparse

from autograder.core.course import Course
from autograder.delivery.release import release, source_assignments
from classroom.classdir import ClassDir

from .args import Subparsers, class_option


def register(sub: Subparsers) -> None:
    rel = sub.add_parser("release", help="generate the student version of assignments with nbgrader")
    rel.add_argument("assignment", nargs="?", help="default: every assignment under source/")
    class_option(rel, "also release to this class: its gradebook and its exchange, where students fetch it")
    rel.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    checkout = Course.find()
    if args.class_dir is None:
        for path in release(checkout, args.assignment):
            print(f"released {path}")
        return 0
    classdir = ClassDir(args.class_dir.resolve()).init(checkout)
    for name in [args.assignment] if args.assignment else source_assignments(checkout):
        print(f"released {name} to the class: {classdir.release(checkout, name)}")
    return 0
