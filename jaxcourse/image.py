"""``jaxcourse image build --variant cpu|cuda|tpu``: the student (and sandbox) image."""

from __future__ import annotations

import argparse

from autograder.engine import images

from .args import Subparsers


def register(sub: Subparsers) -> None:
    image = sub.add_parser("image", help="build the student Docker images")
    actions = image.add_subparsers(dest="image_command", required=True)
    b = actions.add_parser("build", help="build jaxcourse:<variant> from this checkout")
    b.add_argument("--variant", choices=images.VARIANTS, default="cpu", help="platform (default cpu)")
    b.add_argument(
        "--base", help=f"base image (default {images.DEFAULT_BASE}, or the offline base when no registry answers)"
    )
    b.add_argument("--tag", help="image name (default jaxcourse:<variant>)")
    b.add_argument("--quiet", action="store_true", help="no build log")
    b.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    images.build(args.variant, base=args.base, image_tag=args.tag, verbose=not args.quiet)
    return 0
