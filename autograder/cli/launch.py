"""``jaxcourse launch -n N -d M -- COMMAND``: N processes x M simulated devices (jax.distributed)."""

from __future__ import annotations

import argparse
import sys

from ..core.errors import JaxcourseError
from ..harness.launch import LaunchError, command_for, launch, run_group
from .args import Subparsers, default, positive


class LaunchUsage(JaxcourseError):
    """``jaxcourse launch`` was given no command."""


def register(sub: Subparsers) -> None:
    run_ = sub.add_parser("launch", help="run a command in N processes x M simulated devices (jax.distributed)")
    run_.add_argument("-n", "--processes", type=positive, default=default(launch, "num_processes"))
    run_.add_argument("-d", "--devices", type=positive, default=default(launch, "devices_per_process"),
                      help="simulated CPU devices per process")  # fmt: skip
    run_.add_argument(
        "--timeout", type=float, default=default(launch, "timeout"), help="seconds before a hang is reported"
    )
    run_.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command, e.g. -- python train.py")
    run_.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise LaunchUsage("give the command after --, e.g. jaxcourse launch -n 2 -d 4 -- python train.py")
    try:
        run_group([command_for(command)] * args.processes, args.devices, args.timeout)
    except LaunchError as err:
        print(f"jaxcourse: launch failed: {err}", file=sys.stderr)
        return 1
    return 0
