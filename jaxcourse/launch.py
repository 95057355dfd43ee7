"""``jaxcourse launch [--via local|slurm|mpi] -n N -d M -- COMMAND``: N processes x M simulated
devices (jax.distributed), started by the course's launcher, ``srun`` or ``mpirun``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.core.errors import JaxcourseError
from autograder.harness.launcher import command_for, engine_runner, launch, run_processes
from autograder.harness.reports import LaunchError
from classroom.cluster_engines import VIAS, submit_batch

from .args import Subparsers, default, positive


class LaunchUsage(JaxcourseError):
    """``jaxcourse launch`` was given no command, or --batch without Slurm."""


def register(sub: Subparsers) -> None:
    run_ = sub.add_parser("launch", help="run a command in N processes x M simulated devices (jax.distributed)")
    run_.add_argument(
        "--via",
        choices=VIAS,
        default=VIAS[0],  # the course's own launcher
        help="who starts the processes: the course's launcher, srun or mpirun (default %(default)s)",
    )
    run_.add_argument("-n", "--processes", type=positive, default=default(launch, "num_processes"))
    run_.add_argument(
        "-d",
        "--devices",
        type=positive,
        default=default(launch, "devices_per_process"),
        help="simulated CPU devices per process",
    )
    run_.add_argument(
        "--timeout", type=float, default=default(launch, "timeout"), help="seconds before a hang is reported"
    )
    run_.add_argument(
        "--batch",
        action="store_true",
        help="with --via slurm: submit with sbatch, print the job id and the output file, and return",
    )
    run_.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command, e.g. -- python train.py")
    run_.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise LaunchUsage("give the command after --, e.g. jaxcourse launch -n 2 -d 4 -- python train.py")
    if args.batch:
        if args.via != "slurm":
            raise LaunchUsage("--batch submits to Slurm's queue: use it with --via slurm")
        job = submit_batch(command_for(command), args.processes, args.devices, Path.cwd())
        print(
            f"submitted batch job {job.job_id}; its output goes to {job.output} (squeue -j {job.job_id}; "
            f"scancel {job.job_id} stops it)"
        )
        return 0
    try:
        run_processes(command_for(command), args.processes, args.devices, args.timeout, runner=engine_runner(args.via))
    except LaunchError as err:
        print(f"jaxcourse: launch failed: {err}", file=sys.stderr)
        return 1
    return 0
