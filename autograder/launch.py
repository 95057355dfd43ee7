"""Public: ``launch(fn, num_processes=2, devices_per_process=4, via="local")`` runs JAX in several
processes, through the course's launcher, ``srun`` (``via="slurm"``) or ``mpirun`` (``via="mpi"``)."""

from .harness.engines import available_engines
from .harness.launcher import launch
from .harness.reports import LaunchError

__all__ = ["LaunchError", "available_engines", "launch"]
