"""N processes x M simulated devices from one call: results, a crash, a hang, and the command."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import time

import pytest

from autograder.launch import LaunchError, launch

from .helpers.multiprocess import crash_in_one, global_sum, one_never_arrives

pytestmark = pytest.mark.slow


def test_every_process_returns_its_result_by_rank():
    out = io.StringIO()
    results = launch(global_sum, num_processes=2, devices_per_process=4, args=(2.0,), timeout=120, out=out)
    assert [r["rank"] for r in results] == [0, 1]
    # 4 devices holding 1 x 2 and 4 devices holding 2 x 2
    assert [float(r["sum"][0]) for r in results] == [24.0, 24.0]
    assert "[process 0] devices 8 local 4" in out.getvalue()
    assert "[process 1] devices 8 local 4" in out.getvalue()


def test_a_crash_stops_the_group_at_once_and_names_the_process():
    start = time.monotonic()
    with pytest.raises(LaunchError, match="process 1 exited with code 1: RuntimeError: process one gave up"):
        launch(crash_in_one, num_processes=2, devices_per_process=2, timeout=120, out=io.StringIO())
    assert time.monotonic() - start < 30  # not the 60 s the other process would sleep


def test_a_hang_is_reported_at_the_timeout_naming_who_did_not_arrive():
    start = time.monotonic()
    with pytest.raises(LaunchError) as err:
        launch(one_never_arrives, num_processes=2, devices_per_process=2, timeout=15, out=io.StringIO())
    assert time.monotonic() - start < 40
    message = str(err.value)
    assert "the group hung for 15 s" in message
    assert "did not arrive: process 1 (multiprocess.py:" in message and "in one_never_arrives" in message
    assert "waiting inside JAX: process 0" in message


SCRIPT = """
    import os, sys
    import jax
    jax.distributed.initialize(num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
                               process_id=int(os.environ["JAX_PROCESS_ID"]))
    print("rank", jax.process_index(), "of", jax.process_count(), "sees", jax.device_count(), "devices")
    if sys.argv[1:] == ["fail"] and jax.process_index() == 1:
        sys.exit(3)
"""


def _cli(tmp_path, *args):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    argv = [
        sys.executable,
        "-m",
        "jaxcourse",
        "launch",
        "-n",
        "2",
        "-d",
        "3",
        "--timeout",
        "120",
        "--",
        "python",
        str(script),
        *args,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def test_the_command_runs_an_unchanged_cluster_script(tmp_path):
    done = _cli(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "[process 0] rank 0 of 2 sees 6 devices" in done.stdout
    assert "[process 1] rank 1 of 2 sees 6 devices" in done.stdout


def test_the_command_exits_nonzero_when_a_process_fails(tmp_path):
    done = _cli(tmp_path, "fail")
    assert done.returncode == 1
    assert "jaxcourse: launch failed: process 1 exited with code 3" in done.stderr
