"""``jaxcourse hub up|down``: a whole class on this Docker host (JupyterHub, exchange, grading)."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.core.course import Course
from autograder.engine import images
from classroom.classdir import ClassDir
from classroom.hub import deploy, swarm_class, teardown

from .args import Subparsers, class_option, default, port

DEFAULT_CLASS = Path("class")  # under the course checkout


def register(sub: Subparsers) -> None:
    hub = sub.add_parser("hub", help="run a class: JupyterHub, a container per student, grading on submit")
    actions = hub.add_subparsers(dest="action", required=True)
    up = actions.add_parser("up", help="start the class (again); what runs is left running")
    up.add_argument("--roster", type=Path, help="CSV username,role[,password] (needed the first time)")
    up.add_argument(
        "--variant",
        choices=("cpu", "cuda"),
        default=default(deploy.Deployment, "variant"),
        help="the students' image (default %(default)s)",
    )
    up.add_argument(
        "--port", type=port, default=default(deploy.Deployment, "port"), help="the proxy's port (default %(default)s)"
    )
    up.add_argument(
        "--host",
        default=default(deploy.Deployment, "host"),
        help="the address the proxy is published on (default %(default)s: this machine only; any "
        "other needs --tls-cert and --tls-key)",
    )
    up.add_argument("--tls-cert", type=Path, help="a PEM certificate for the name students use: the proxy speaks HTTPS")
    up.add_argument("--tls-key", type=Path, help="the certificate's PEM key")
    up.add_argument(
        "--domain",
        help="the name students type (default jaxcourse.localhost, on this machine): each user's "
        "server is at <user>.NAME, an origin of its own, so *.NAME must reach this machine",
    )
    up.add_argument(
        "--swarm",
        action="store_true",
        help="run the class across the Docker Swarm this engine manages: students' servers on the nodes "
        "labelled jaxcourse.lab=yes, grading workers on those labelled jaxcourse.grade=yes (docs/swarm.md: a "
        "class on several machines)",
    )
    down = actions.add_parser("down", help="stop the class; its state stays in the class directory")
    for action in (up, down):
        class_option(action, "the class directory (default: class/ in the course checkout)")
    hub.set_defaults(run=run)


def class_dir(args: argparse.Namespace, checkout: Course) -> ClassDir:
    """The class directory ``--class`` names, else class/ in the checkout."""
    return ClassDir((args.class_dir or checkout.root / DEFAULT_CLASS).resolve())


def run(args: argparse.Namespace) -> int:
    checkout = Course.find()
    classdir = class_dir(args, checkout)
    if args.action == "down":
        teardown.down(deploy.Deployment(classdir, checkout))
        return 0
    if args.variant not in images.VARIANTS:
        raise deploy.HubError(f"unknown variant {args.variant}")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise deploy.HubError("--tls-cert and --tls-key go together: a certificate and its key")
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    deployment = deploy.Deployment(classdir, checkout, args.variant, args.host, args.port, tls, args.domain)
    deploy.up(deployment, args.roster, placement=swarm_class.ACROSS_THE_SWARM if args.swarm else None)
    return 0
