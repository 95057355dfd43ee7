"""``jaxcourse grade ASSIGNMENT``: every submission of an assignment, in locked-down sandboxes."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from autograder import specs
from autograder.core import environment, logs
from autograder.core.course import Course
from autograder.grading.record import batch
from classroom.classdir import ClassDir
from classroom.grading.class_run import on_queue, through_service

from .args import Subparsers, broker_url, class_option, default, positive


def register(sub: Subparsers) -> None:
    grade = sub.add_parser("grade", help="grade every submission of an assignment")
    grade.add_argument("assignment")
    grade.add_argument("--submissions", type=Path, help="nbgrader submitted/ layout (default: the course's)")
    grade.add_argument("--out", type=Path, help="where grades.csv and per-student results go")
    grade.add_argument(
        "--jobs",
        type=positive,
        default=default(batch.grade_class, "jobs"),
        help="submissions graded at once (default: the cores over each sandbox's CPU quota)",
    )
    grade.add_argument(
        "--sandbox",
        choices=(*batch.SANDBOXES, "service"),
        default=os.environ.get(environment.SANDBOX) or default(batch.grade_class, "sandbox"),
        help="docker (default): a locked-down container per submission, or an error where no "
        "engine answers; process: a local process that isolates nothing, for development; "
        "service: the class's grading service and its workers (--class; an instructor's server "
        "on a hub, which holds no engine, uses it by default)",
    )
    grade.add_argument(
        "--image",
        default=default(batch.grade_class, "image"),
        help="the sandbox's image (default %(default)s, built when missing)",
    )
    grade.add_argument("--force", action="store_true", help="grade again what an earlier run already graded")
    class_option(grade, "grade a class: its submitted/, graded/ and gradebook (jaxcourse collect --class first)")
    grade.add_argument(
        "--broker", type=broker_url, help="grade on the queue's workers (redis://:PASSWORD@HOST:6379/0) instead of here"
    )
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    grade.add_argument(
        "--profile",
        action="store_true",
        help="print where the time went: each phase's median over the submissions graded",
    )
    grade.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    specs.get(args.assignment)  # an unknown name fails here, with the known ones
    course = Course.find()
    if args.class_dir is not None:
        course = ClassDir.open(args.class_dir).course(course)
    logs.configure("stderr")  # stdout is the grades' summary; what grading says goes beside it
    queue = on_queue(args.broker, course) if args.broker else None
    if args.sandbox == "service":
        if args.class_dir is None:
            raise batch.SandboxUnavailable("--sandbox service grades a class through its grading service: --class DIR")
        queue = through_service(course)
    result = batch.grade_class(
        args.assignment,
        course,
        args.submissions,
        args.out,
        args.jobs,
        not args.quiet,
        args.sandbox,
        args.image,
        args.force,
        queue=queue,
    )
    print(batch.summary(result))
    if args.profile:
        print(batch.profile(result))
    return 0
