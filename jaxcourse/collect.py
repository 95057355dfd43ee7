"""``jaxcourse collect ASSIGNMENT``: submissions into nbgrader's submitted/ layout, from the
class's exchange or from an LMS's bulk download."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.core.course import Course
from autograder.delivery import collect
from classroom.classdir import ClassDir
from classroom.exchange.collect import from_exchange

from .args import Subparsers, class_option


def register(sub: Subparsers) -> None:
    p = sub.add_parser("collect", help="collect submissions from the class exchange or an LMS archive")
    p.add_argument("assignment")
    class_option(p, "the class directory (its exchange and submitted/)")
    p.add_argument("--zip", type=Path, help="an LMS's 'download all submissions' archive instead of the exchange")
    p.add_argument(
        "--pattern",
        default="canvas",
        help=f"how the archive names files: {', '.join(collect.LMS_PATTERNS)}, or a regular expression "
        "with (?P<student>...) and (?P<file>...) (default %(default)s)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    checkout = Course.find()
    classdir = ClassDir.open(args.class_dir) if args.class_dir else None
    submitted = (classdir.root if classdir else checkout.nbgrader_root) / "submitted"
    if args.zip is not None:
        done = collect.from_zip(args.zip, args.assignment, submitted, args.pattern)
    elif classdir is not None:
        done = from_exchange(classdir.store, args.assignment, submitted)
    else:
        raise collect.CollectError("say where from: --class DIR (the class exchange) or --zip FILE (an LMS archive)")
    print(f"collected {len(done.students)} students' {args.assignment} into {submitted}")
    for name in done.unmatched:
        print(f"  not collected (its name matches no student): {name}")
    for name in done.collided:
        print(f"  several participants are called {name}: each collected as {name}-<their LMS id>")
    return 0
