"""``jaxcourse worker``: grade jobs from the queue on this host until stopped."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from autograder.core.course import Course
from autograder.grading.record import batch
from autograder.grading.sandbox import limits
from classroom import environment
from classroom.grading import worker as grading_worker
from classroom.grading.class_run import job_seconds
from classroom.queue.app import BrokerError
from classroom.queue.jobs import outcome_key

from .args import Subparsers, broker_url, positive


def register(sub: Subparsers) -> None:
    p = sub.add_parser("worker", help="grade submissions from a queue (Celery on Redis) on this host")
    p.add_argument(
        "--broker",
        type=broker_url,
        default=os.environ.get(environment.BROKER),
        help=f"redis://:PASSWORD@HOST:6379/0 (default: ${environment.BROKER}, which keeps the password out of `ps`)",
    )
    p.add_argument(
        "--concurrency",
        type=positive,
        help="submissions graded at once (default: the cores over each sandbox's CPU quota)",
    )
    p.add_argument("--course", type=Path, help="the course checkout with its solutions (default: found from here)")
    p.add_argument(
        "--sandbox",
        choices=("docker", "process"),
        default="docker",
        help="docker (default): locked-down containers, a lane per job it grades at once",
    )
    p.add_argument("--image", default=batch.DEFAULT_IMAGE, help="the sandbox's image (default %(default)s)")
    p.add_argument("--cache", type=Path, help="reference results and compiled programs (default: under $TMPDIR)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.broker:
        raise BrokerError(f"say where the queue is: --broker redis://:PASSWORD@HOST:6379/0, or ${environment.BROKER}")
    course = Course.find(args.course) if args.course else Course.find()
    if args.course:
        os.environ.setdefault(environment.ROOT, str(course.root))  # the image check finds the lock here
    concurrency = args.concurrency or limits.load(course.root, "").default_jobs()
    key = outcome_key(args.broker)
    host = grading_worker.open_worker(course, args.sandbox, args.image, args.cache, key, lanes=concurrency)
    grading_worker.serve(host, args.broker, concurrency, job_seconds(course))
    return 0
