"""``jaxcourse release [ASSIGNMENT]``: nbgrader's generate_assignment, then a leak check."""

from __future__ import annotations

import argparse

from ..core.course import Course
from ..delivery.release import release
from .args import Subparsers


def register(sub: Subparsers) -> None:
    rel = sub.add_parser("release", help="generate the student version of assignments with nbgrader")
    rel.add_argument("assignment", nargs="?", help="default: every assignment under source/")
    rel.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    for path in release(Course.find(), args.assignment):
        print(f"released {path}")
    return 0
