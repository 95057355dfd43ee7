"""``jaxcourse lab``: JupyterLab with the course, in the image when Docker answers, else locally."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.delivery import lab
from autograder.engine import images

from .args import Subparsers, default, port


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "lab",
        help="start JupyterLab with the course: in Docker, or from this venv (--local)",
        description="Start JupyterLab with the course and print its URL; Ctrl-C stops it. With a Docker "
        "engine it runs the course image; without one, or with --local, it serves the same course "
        "from this venv (8 simulated CPU devices), its terminals with `jaxcourse` on their PATH.",
    )
    p.add_argument(
        "--variant",
        choices=images.VARIANTS,
        default=default(lab.run, "variant"),
        help="the image's platform, in Docker (default cpu)",
    )
    p.add_argument("--port", type=port, default=default(lab.run, "port"), help="port on 127.0.0.1 (default 8888)")
    p.add_argument(
        "--work",
        type=Path,
        metavar="DIR",
        default=Path.home() / "jaxcourse-work",
        help="your work directory on this machine (default ~/jaxcourse-work)",
    )
    p.add_argument(
        "--local", action="store_true", help="serve from this venv, without Docker, even where Docker is installed"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return lab.run(args.work, args.variant, args.port, args.local)
