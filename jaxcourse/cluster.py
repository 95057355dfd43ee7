"""``jaxcourse cluster up|down``: a one-machine Slurm cluster (munge, slurmctld, slurmd) for the course."""

from __future__ import annotations

import argparse
from pathlib import Path

from classroom import cluster

from .args import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser("cluster", help="start or stop a one-machine Slurm cluster (Debian's slurm-wlm, munge)")
    actions = parser.add_subparsers(dest="action", required=True)
    up = actions.add_parser("up", help="configure and start munge, slurmctld and slurmd on localhost (idempotent)")
    down = actions.add_parser("down", help="cancel its jobs and stop the daemons; the files stay")
    for action in (up, down):
        action.add_argument(
            "--state",
            type=Path,
            default=cluster.STATE,
            help="where config, key, logs and pid files live (default %(default)s)",
        )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    where = cluster.Cluster(args.state.resolve())
    (cluster.up if args.action == "up" else cluster.down)(where)
    return 0
