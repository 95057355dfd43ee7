"""The real engines: under ``srun`` (the one-machine Slurm of ``jaxcourse cluster up``) and
``mpirun``, 2 processes x 4 simulated devices give the local launcher's results, for a psum and
for assignment 03's reference training; a crash stops the job with the engine's report; a hang is
reported within the timeout, naming the process; and the cluster starts and stops idempotently."""

from __future__ import annotations

import io
import logging
import re
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from autograder.launch import LaunchError, launch
from classroom import cluster

from ..helpers.cluster import WHAT
from ..helpers.engine import unavailable
from ..helpers.multiprocess import crash_in_one, global_sum, one_never_arrives

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

ENGINES = ["slurm", "mpi"]


@pytest.fixture(params=ENGINES)
def via(request):
    """Each engine in turn: Slurm needs the session's cluster, Open MPI only ``mpirun``."""
    if request.param == "slurm":
        request.getfixturevalue("slurm_cluster")
    elif shutil.which("mpirun") is None:
        unavailable(WHAT, f"mpirun not installed here: apt-get install -y {cluster.PACKAGES} (as root)")
    return request.param


def train_03(steps, seed):
    """Assignment 03's reference training, as the grader runs it in each process."""
    from solutions.multiprocess_training import train

    params, losses = train(steps, seed)
    return params, [np.asarray(loss) for loss in losses]


@pytest.fixture(scope="module")
def local_results():
    """What the course's own launcher gives, once: the results every engine must match."""
    return {
        "psum": launch(global_sum, 2, 4, args=(2.0,), out=io.StringIO()),
        "train": launch(train_03, 2, 4, args=(3, 0), out=io.StringIO()),
    }


def test_a_psum_across_processes_equals_the_local_launchers(via, local_results):
    out = io.StringIO()
    results = launch(global_sum, 2, 4, args=(2.0,), out=out, via=via)
    assert [r["rank"] for r in results] == [0, 1]
    assert [float(r["sum"][0]) for r in results] == [float(r["sum"][0]) for r in local_results["psum"]] == [24.0] * 2
    assert "[process 0] devices 8 local 4" in out.getvalue()
    assert "[process 1] devices 8 local 4" in out.getvalue()


def test_the_reference_train_of_03_equals_the_local_launchers(via, local_results):
    results = launch(train_03, 2, 4, args=(3, 0), out=io.StringIO(), via=via)
    for (params, losses), (expected_params, expected_losses) in zip(results, local_results["train"], strict=True):
        assert len(losses) == len(expected_losses) == 3
        np.testing.assert_array_equal(np.asarray(losses), np.asarray(expected_losses))
        for name in expected_params:
            np.testing.assert_array_equal(params[name], expected_params[name])


ENGINE_REPORT = {
    "slurm": r"\(task 1: Exited with exit code 1\)",
    "mpi": r"\(mpirun: first to fail: Process name: \[\[\d+,1\],1\] Exit code: 1\)",
}


def test_a_crash_stops_the_job_with_the_engines_report(via):
    start = time.monotonic()
    with pytest.raises(LaunchError) as err:
        launch(crash_in_one, 2, 2, timeout=120, out=io.StringIO(), via=via)
    assert time.monotonic() - start < 30  # not the 60 s the other process would sleep
    expected = r"process 1 exited with code 1: RuntimeError: process one gave up; the other processes were stopped "
    assert re.fullmatch(expected + ENGINE_REPORT[via], str(err.value)), str(err.value)


def test_a_hang_is_reported_within_the_timeout_naming_the_process(via):
    start = time.monotonic()
    with pytest.raises(LaunchError) as err:
        launch(one_never_arrives, 2, 2, timeout=10, out=io.StringIO(), via=via)
    assert time.monotonic() - start < 30
    message = str(err.value)
    assert "the group hung for 10 s" in message
    assert "did not arrive: process 1 (multiprocess.py:" in message and "in one_never_arrives" in message
    assert "waiting inside JAX: process 0" in message
    if via == "slurm":  # the engine's own tool says who was still running
        assert re.search(r"Slurm step \d+\.\d+: scontrol listpids shows task 0, 1 still running", message), message


SCRIPT = """
    import sys
    import jax
    jax.distributed.initialize()  # no arguments: JAX finds srun's or mpirun's variables
    print("rank", jax.process_index(), "of", jax.process_count(), "sees", jax.device_count(), "devices")
    if sys.argv[1:] == ["fail"] and jax.process_index() == 1:
        sys.exit(3)
"""


def _cli(tmp_path, options, script_args=(), env=None):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    argv = [sys.executable, "-m", "jaxcourse", "launch", *options, "--", "python", str(script), *script_args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)


def test_the_command_runs_a_cluster_script_and_exits_nonzero_when_a_process_fails(via, tmp_path):
    done = _cli(tmp_path, ["--via", via, "-n", "2", "-d", "3"])
    assert done.returncode == 0, done.stderr
    assert "[process 0] rank 0 of 2 sees 6 devices" in done.stdout
    assert "[process 1] rank 1 of 2 sees 6 devices" in done.stdout
    failed = _cli(tmp_path, ["--via", via, "-n", "2", "-d", "3"], ["fail"])
    assert failed.returncode == 1
    assert "jaxcourse: launch failed: process 1 exited with code 3" in failed.stderr


def test_a_batch_job_prints_its_id_and_its_output_file(slurm_cluster, tmp_path):
    done = _cli(tmp_path, ["--via", "slurm", "--batch", "-n", "2", "-d", "2"])
    assert done.returncode == 0, done.stderr
    match = re.fullmatch(
        r"submitted batch job (\d+); its output goes to (\S+) \(squeue -j \d+; scancel \d+ stops it\)\n", done.stdout
    )
    assert match, done.stdout
    job, output = match[1], tmp_path / f"jaxcourse-{match[1]}.out"
    assert match[2] == str(output)
    deadline = time.monotonic() + 60
    while subprocess.run(["squeue", "--noheader", "-j", job], capture_output=True, text=True).stdout.strip():
        assert time.monotonic() < deadline, f"batch job {job} still queued or running after 60 s"
        time.sleep(0.5)
    said = output.read_text()
    assert "0: rank 0 of 2 sees 4 devices" in said and "1: rank 1 of 2 sees 4 devices" in said, said


def test_cluster_up_twice_is_a_no_op_and_down_with_nothing_running_says_so(slurm_cluster, tmp_path, caplog):
    pids = [slurm_cluster.pid_file(d).read_text() for d in cluster.DAEMONS]
    with caplog.at_level(logging.INFO, logger="classroom"):
        cluster.up(slurm_cluster)
    assert caplog.messages == [
        f"the cluster is already up (partition course on localhost; state in {slurm_cluster.state})"
    ]
    assert [slurm_cluster.pid_file(d).read_text() for d in cluster.DAEMONS] == pids  # nothing restarted
    empty = tmp_path / "no-cluster"
    done = subprocess.run(
        [sys.executable, "-m", "jaxcourse", "cluster", "down", "--state", str(empty)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == f"no cluster is running (state in {empty})\n", done
    assert cluster.running(slurm_cluster) == list(cluster.DAEMONS)  # the session's cluster is untouched


def test_cluster_up_without_the_packages_names_the_apt_get_command(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "jaxcourse", "cluster", "up", "--state", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(tmp_path)},
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.endswith("not found: apt-get install -y slurm-wlm munge openmpi-bin (as root), then try again\n")
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("via", ENGINES)
def test_an_engine_that_is_not_there_is_a_one_line_error(via, tmp_path):
    done = _cli(tmp_path, ["--via", via], env={"PATH": str(tmp_path)})  # no srun, no mpirun
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    program = {"slurm": "srun", "mpi": "mpirun"}[via]
    assert done.stderr.startswith(f"jaxcourse: launch failed: --via {via} needs {program}, which is not ready: apt-get")
