"""``jaxcourse``: the parser of every command, and the one place errors become one line."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from autograder.core import logs
from autograder.core.errors import JaxcourseError

from . import (
    check,
    cluster,
    collect,
    grade,
    hub,
    image,
    lab,
    launch,
    release,
    release_feedback,
    report,
    similar,
    worker,
    workers,
)
from .args import Parser

COMMANDS = (
    check,
    grade,
    report,
    similar,
    launch,
    cluster,
    release,
    collect,
    release_feedback,
    image,
    lab,
    hub,
    worker,
    workers,
)


def build_parser() -> Parser:
    parser = Parser(
        prog="jaxcourse",
        description="Course tooling: release, check and grade assignments.",
        epilog="A student: `jaxcourse lab` serves the course in JupyterLab (in Docker, or from this "
        "venv with --local), `jaxcourse check NOTEBOOK` grades a saved notebook. "
        "`jaxcourse COMMAND --help` says more.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logs.configure()
    try:
        return int(args.run(args))
    except (JaxcourseError, FileNotFoundError) as err:
        print(f"jaxcourse: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxcourse: interrupted; what was graded is saved, run the command again to go on", file=sys.stderr)
        return 130
