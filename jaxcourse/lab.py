"""``jaxcourse lab``: JupyterLab with the course, in the image when Docker answers, else locally."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.delivery import lab
from autograder.engine import images

from .args import Subparsers, default, port


def register(sub: Subparsers) -> None:
    p = sub.add_parser("lab", help="start JupyterLab with the course (Docker, else the local venv)")
    p.add_argument(
        "--variant", choices=images.VARIANTS, default=default(lab.run, "variant"), help="image platform (default cpu)"
    )
    p.add_argument("--port", type=port, default=default(lab.run, "port"), help="port on 127.0.0.1 (default 8888)")
    p.add_argument(
        "--work",
        type=Path,
        default=Path.home() / "jaxcourse-work",
        help="your work directory on this machine (default ~/jaxcourse-work)",
    )
    p.add_argument("--local", action="store_true", help="serve from the local venv even if Docker is here")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return lab.run(args.work, args.variant, args.port, args.local)
