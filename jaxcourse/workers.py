"""``jaxcourse workers scale N``: how many grading workers a class on a Docker Swarm runs."""

from __future__ import annotations

import argparse

from autograder.core.course import Course
from autograder.engine import images
from classroom.hub import deploy, swarm_queue

from .args import Subparsers, class_option
from .hub import class_dir


def register(sub: Subparsers) -> None:
    workers = sub.add_parser("workers", help="the grading workers of a class on a Docker Swarm (hub up --swarm)")
    actions = workers.add_subparsers(dest="action", required=True)
    scale = actions.add_parser("scale", help="run N workers, on the nodes labelled jaxcourse.grade=yes")
    scale.add_argument("replicas", type=int, metavar="N", help="how many workers (0 stops them all)")
    class_option(scale, "the class directory (default: class/ in the course checkout)")
    workers.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.replicas < 0:
        raise deploy.HubError(f"{args.replicas} workers: give a number of workers, 0 or more")
    checkout = Course.find()
    deployment = deploy.Deployment(class_dir(args, checkout), checkout)
    service = swarm_queue.rescale(images.connect(), deployment, args.replicas)
    print(f"{service.name}: {args.replicas} workers")
    return 0
