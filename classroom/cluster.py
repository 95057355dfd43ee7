"""A one-machine Slurm cluster for the course and CI: munge, slurmctld and slurmd on localhost,
one partition with this machine's cores, from Debian's packages (installed by hand or by CI,
never by this module). ``mpirun`` needs no daemon; it is only checked for.

Everything the cluster writes lives in one directory (``STATE``, by default
/var/lib/jaxcourse/cluster): slurm.conf, the munge key it creates, the daemons' sockets, pid files,
logs and spool. The one thing outside it is a link /etc/slurm/slurm.conf -> that slurm.conf, so
that ``srun``, ``sbatch`` and ``sinfo`` find the cluster from any shell or notebook; it is made only
where no Slurm configuration exists, and removed by ``down``.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.core.errors import JaxcourseError

log = logging.getLogger(__name__)

STATE = Path("/var/lib/jaxcourse/cluster")
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
PARTITION = "course"
PACKAGES = "slurm-wlm munge openmpi-bin"
PROGRAMS = ("munged", "mungekey", "slurmctld", "slurmd", "srun", "sinfo", "scontrol", "mpirun")
DAEMONS = ("munged", "slurmctld", "slurmd")  # in the order they start; stopped in reverse


class ClusterError(JaxcourseError):
    """The cluster cannot start or stop; the message says what to do."""


@dataclass(frozen=True)
class Cluster:
    """Where one cluster's files live; ``conf_link`` is where Slurm's tools look for its config."""

    state: Path = STATE
    conf_link: Path = SYSTEM_CONF

    @property
    def conf(self) -> Path:
        return self.state / "slurm.conf"

    @property
    def socket(self) -> Path:
        return self.state / "munge.socket"

    def pid_file(self, daemon: str) -> Path:
        return self.state / f"{daemon}.pid"

    def log(self, daemon: str) -> Path:
        return self.state / f"{daemon}.log"


def running(cluster: Cluster) -> list[str]:
    """The daemons of ``cluster`` that are alive, from their pid files."""
    return [daemon for daemon in DAEMONS if _pid(cluster, daemon) is not None]


def up(cluster: Cluster = Cluster()) -> None:
    """Start what is not running yet; a cluster that is up already is left as it is."""
    missing = [program for program in PROGRAMS if shutil.which(program) is None]
    if missing:
        raise ClusterError(f"{', '.join(missing)} not found: apt-get install -y {PACKAGES} (as root), then try again")
    if os.geteuid() != 0:
        raise ClusterError("the course's cluster runs its daemons as root: run jaxcourse cluster up as root")
    alive = running(cluster)
    if alive == list(DAEMONS) and _answers():
        _link(cluster)
        log.info(f"the cluster is already up (partition {PARTITION} on localhost; state in {cluster.state})")
        return
    cluster.state.mkdir(parents=True, exist_ok=True)
    cluster.state.chmod(0o755)  # munged refuses a socket in a directory others cannot enter
    env = {**os.environ, "SLURM_CONF": str(cluster.conf)}
    if "munged" not in alive:
        _start_munge(cluster)
    cluster.conf.write_text(slurm_conf(cluster, _node()))
    _link(cluster)
    if "slurmctld" not in alive:
        _start(cluster, ["slurmctld", "-c"], env)  # -c: no jobs carried over from an earlier run
    if "slurmd" not in alive:
        _start(cluster, ["slurmd", "-N", "localhost"], env)
    _wait_until_up(cluster)
    log.info(f"the cluster is up: partition {PARTITION} on localhost; config, logs and state in {cluster.state}")


def down(cluster: Cluster = Cluster()) -> None:
    """Cancel the cluster's jobs, stop its daemons and remove the config link."""
    alive = running(cluster)
    if not alive:
        _unlink(cluster)
        log.info(f"no cluster is running (state in {cluster.state})")
        return
    if "slurmctld" in alive:
        subprocess.run(["scancel", "--quiet", f"--partition={PARTITION}"], capture_output=True, timeout=30)
    for daemon in reversed(DAEMONS):
        _stop(cluster, daemon)
    _unlink(cluster)
    log.info(f"the cluster is stopped; its files stay in {cluster.state}")


def slurm_conf(cluster: Cluster, node: str) -> str:
    """One node, localhost, run by root: no cgroups (a container may not allow them), processes
    tracked through /proc, CPUs as consumable resources so jobs queue for cores, and 2 s from
    SIGTERM to SIGKILL (JAX catches SIGTERM as a preemption notice, so a stopped task waits it out)."""
    s = cluster.state
    return f"""# Written by jaxcourse cluster up; rewritten on each start.
ClusterName=jaxcourse
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={cluster.socket}
StateSaveLocation={s}/slurmctld
SlurmdSpoolDir={s}/slurmd
SlurmctldPidFile={cluster.pid_file("slurmctld")}
SlurmdPidFile={cluster.pid_file("slurmd")}
SlurmctldLogFile={cluster.log("slurmctld")}
SlurmdLogFile={cluster.log("slurmd")}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
InactiveLimit=0
KillWait=2
NodeName=localhost NodeAddr=127.0.0.1 {node} State=UNKNOWN
PartitionName={PARTITION} Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def _node() -> str:
    """This machine's CPUs, topology and memory as slurmd measures them, less its host name."""
    done = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30)
    fields = done.stdout.splitlines()[0].split() if done.returncode == 0 and done.stdout else []
    kept = [
        f
        for f in fields
        if f.split("=")[0] in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")
    ]
    if not kept:
        raise ClusterError(f"slurmd -C did not describe this machine: {done.stderr.strip() or done.stdout.strip()}")
    return " ".join(kept)


def _start_munge(cluster: Cluster) -> None:
    key = cluster.state / "munge.key"
    if not key.exists():  # the course's own key: Debian's belongs to the munge user, not root
        _check(["mungekey", "--create", f"--keyfile={key}"], "mungekey")
    _check(
        [
            "munged",
            f"--socket={cluster.socket}",
            f"--key-file={key}",
            f"--pid-file={cluster.pid_file('munged')}",
            f"--log-file={cluster.log('munged')}",
            f"--seed-file={cluster.state / 'munged.seed'}",
        ],
        "munged",
    )


def _start(cluster: Cluster, argv: list[str], env: dict[str, str]) -> None:
    for spool in ("slurmctld", "slurmd"):
        (cluster.state / spool).mkdir(exist_ok=True)
    _check(argv, argv[0], env)


def _check(argv: list[str], daemon: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise ClusterError(f"{daemon} did not start: {said[-1] if said else 'no message'}")


def _answers() -> bool:
    done = subprocess.run(
        ["sinfo", "--noheader", "--responding", "--format=%a %t"], capture_output=True, text=True, timeout=30
    )
    return done.returncode == 0 and done.stdout.split()[:1] == ["up"]


def _wait_until_up(cluster: Cluster, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _answers():
            return
        time.sleep(0.5)
    raise ClusterError(
        f"Slurm did not answer within {seconds:g} s: see {cluster.log('slurmctld')} and {cluster.log('slurmd')}"
    )


def _link(cluster: Cluster) -> None:
    link = cluster.conf_link
    if link.is_symlink() and link.resolve() == cluster.conf.resolve():
        return
    if link.exists() or link.is_symlink():
        raise ClusterError(
            f"{link} exists and is not the course's: this machine has its own Slurm; use it, or move {link} away"
        )
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(cluster.conf)


def _unlink(cluster: Cluster) -> None:
    link = cluster.conf_link
    if link.is_symlink() and link.resolve() == cluster.conf.resolve():
        link.unlink()


def _pid(cluster: Cluster, daemon: str) -> int | None:
    try:
        pid = int(cluster.pid_file(daemon).read_text().split()[0])
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError, IndexError):
        return None
    return pid if comm == daemon else None  # a stale pid file may name someone else's process


def _stop(cluster: Cluster, daemon: str, seconds: float = 15) -> None:
    pid = _pid(cluster, daemon)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while _pid(cluster, daemon) is not None:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    cluster.pid_file(daemon).unlink(missing_ok=True)
