"""The warm trusted worker: each job in a child of its own, forked from a server that imported JAX
once. A child that hangs, crashes or loses its server is killed and replaced, its job is run
again where the fault was not its own, and the next job runs as if nothing happened. The jobs
are real: the instructor's references for a few of assignment 01's cases."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from autograder.core import forkserver
from autograder.core.files import write_atomic
from autograder.grading.pipeline import worker_process
from autograder.grading.pipeline.grader import grader_for
from autograder.grading.pipeline.measured import MeasuredPrograms
from autograder.grading.pipeline.references import fingerprint
from autograder.grading.sandbox import forked
from autograder.grading.sandbox.local import ProcessSandbox
from autograder.grading.sandbox.sandbox import Deadline, kill_group, watch
from autograder.trusted import reference as records
from autograder.trusted.jobs import ReferenceRun

from ..helpers.course import ASSIGNMENT, solved_notebook, write_submission

pytestmark = pytest.mark.slow


@pytest.fixture
def references(course, tmp_path):
    """A job that computes three cases' reference records into ``tmp_path``, and their paths."""
    grader = grader_for(ASSIGNMENT, course, tmp_path / "cache")
    tests = grader.tests[:3]
    stores = [str(tmp_path / fingerprint(grader.provider, t.sig, t.seed)) for t in tests]
    job: ReferenceRun = {
        "mode": "reference",
        "num_devices": grader.num_devices,
        "provider": {"root": str(course.root), "assignment": ASSIGNMENT},
        "tests": [{"sig": t.sig, "seed": t.seed, "targets": t.targets, "store": s} for t, s in zip(tests, stores)],
    }
    return job, stores


def _forked(job, work, name):
    """The job's child, forked by the shared server, before anything watches it."""
    path = work / f"{name}.json"
    write_atomic(path, json.dumps(job))
    return worker_process.SHARED.get().fork([str(path)], work, work / f"{name}.log")


def _made(stores):
    return all(records.exists(s) for s in stores)


def test_jobs_run_in_fresh_children_of_one_warm_server(references, tmp_path):
    job, stores = references
    first = worker_process.run_worker(job, tmp_path, "first", Deadline(120))
    server = worker_process.SHARED.get()
    assert first.status == "ok" and _made(stores), first.log_tail
    for store in stores:
        for path in tmp_path.glob(os.path.basename(store) + "*"):
            path.unlink()
    child = _forked(job, tmp_path, "second")
    outcome = watch(child, tmp_path / "second.log", Deadline(120))
    assert outcome.status == "ok" and _made(stores), outcome.log_tail
    assert child.pid != server.proc.pid and worker_process.SHARED.get() is server


def test_a_hung_child_is_killed_at_its_limit_and_the_next_job_runs(references, tmp_path):
    job, stores = references
    child = _forked(job, tmp_path, "hung")
    os.kill(child.pid, signal.SIGSTOP)  # it never moves again: a hang, as the grader sees one
    outcome = watch(child, tmp_path / "hung.log", Deadline(2.0))
    assert outcome.status == "timeout" and not _made(stores)
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)  # killed and reaped, not left stopped
    after = worker_process.run_worker(job, tmp_path, "after", Deadline(120))
    assert after.status == "ok" and _made(stores), after.log_tail


def test_a_crashed_child_is_reported_by_its_signal_and_the_next_job_runs(references, tmp_path):
    job, stores = references
    child = _forked(job, tmp_path, "crashed")
    os.kill(child.pid, signal.SIGSEGV)
    outcome = watch(child, tmp_path / "crashed.log", Deadline(60))
    assert (outcome.status, outcome.reason) == ("crashed", "was killed by signal 11 (SIGSEGV)")
    after = worker_process.run_worker(job, tmp_path, "after", Deadline(120))
    assert after.status == "ok" and _made(stores), after.log_tail


def test_a_job_whose_server_dies_under_it_runs_again_in_a_new_one(references, tmp_path):
    job, stores = references
    server = worker_process.SHARED.get()

    def kill_server_once_it_forks():
        deadline = time.monotonic() + 60
        while not server.live and time.monotonic() < deadline:
            time.sleep(0.01)
        server.proc.kill()

    killer = threading.Thread(target=kill_server_once_it_forks)
    killer.start()
    outcome = worker_process.run_worker(job, tmp_path, "killed", Deadline(120))
    killer.join()
    assert server.gone and server.orphans, "the server was not killed while its child ran"
    assert outcome.status == "ok" and _made(stores), outcome.log_tail
    replacement = worker_process.SHARED.get()
    assert replacement is not server and replacement.proc.poll() is None


def test_a_submission_graded_across_a_dead_server_scores_as_without(course, tmp_path):
    """The server killed while it measures one student's cases: her report is the one she gets
    without the fault, and the next student's is graded as usual."""
    grader = grader_for(ASSIGNMENT, course, timeout=120, sandbox=ProcessSandbox())
    notebook = write_submission(tmp_path, "ann", solved_notebook(course))
    calm = grader.grade("ann", notebook)
    grader.measured = MeasuredPrograms()  # nothing reused: every case is measured again
    server = worker_process.SHARED.get()
    killed = threading.Event()

    def kill_mid_measure():
        while not killed.is_set() and not server.gone:
            if server.live:
                server.proc.kill()
                killed.set()
            time.sleep(0.005)

    threading.Thread(target=kill_mid_measure, daemon=True).start()
    faulted = grader.grade("ann", notebook)
    killed.set()
    assert server.gone and server.orphans
    scores = [(t.name, t.score, t.status) for t in calm.tests]
    assert [(t.name, t.score, t.status) for t in faulted.tests] == scores
    after = grader.grade("bob", write_submission(tmp_path, "bob", solved_notebook(course)))
    assert [(t.name, t.score, t.status) for t in after.tests] == scores


@pytest.mark.parametrize("kill", [kill_group, forkserver._kill_group], ids=["grader", "server"])
def test_a_process_that_has_not_made_its_group_yet_is_killed_all_the_same(kill):
    """A child stopped between its fork and its ``setsid`` is in its parent's group: killing its
    group finds none, and the process itself is killed instead (a server once waited forever on
    such a child)."""
    sleeper = subprocess.Popen(["sleep", "600"])  # in this process's group, not one of its own
    try:
        kill(sleeper.pid)
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
    finally:
        sleeper.kill()


def test_a_server_whose_grader_is_gone_kills_its_children_and_exits(references, tmp_path):
    job, _ = references
    server = forked.ForkServer.start(worker_process.server_command())
    path = tmp_path / "orphan.json"
    write_atomic(path, json.dumps(job))
    child = server.fork([str(path)], tmp_path, tmp_path / "orphan.log")
    os.kill(child.pid, signal.SIGSTOP)
    server.stop()  # its stdin closes, as when the grading process dies
    assert server.proc.returncode == 0
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)


def test_a_server_that_writes_what_is_not_an_event_is_stopped_and_said(tmp_path):
    """Nothing of ours writes such a line; if one comes, the server is taken as gone wrong: it is
    killed, and a job asked of it is refused at once instead of waiting forever."""
    impostor = subprocess.Popen(
        ["sh", "-c", "echo not an event; exec sleep 600"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    server = forked.ForkServer(impostor, tmp_path, "the warm trusted worker")
    reader = threading.Thread(target=server._read_events)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive() and server.gone
    assert impostor.wait(timeout=10) == -signal.SIGKILL
    with pytest.raises(forked.ServerGone, match="the warm trusted worker stopped"):
        server.fork([str(tmp_path / "job.json")], tmp_path, tmp_path / "job.log")


def test_without_a_warm_server_every_job_runs_cold_and_it_is_said_once(references, tmp_path, monkeypatch, caplog):
    """A server that cannot start (here: its module is not there; elsewhere, imports that
    started a thread) leaves the jobs to cold processes, graded the same, said once."""
    job, stores = references
    monkeypatch.setattr(worker_process, "SHARED", forked.Shared(worker_process.server_command))
    monkeypatch.setattr(worker_process, "FORKSERVER", "autograder.trusted.no_such_server")
    with caplog.at_level(logging.WARNING, logger="autograder"):
        outcomes = [worker_process.run_worker(job, tmp_path, name, Deadline(120)) for name in ("one", "two")]
    assert [o.status for o in outcomes] == ["ok", "ok"] and _made(stores), outcomes[-1].log_tail
    said = caplog.text
    assert said.count("each job starts a cold process instead") == 1, said
    assert "the warm trusted worker did not start" in said and "no_such_server" in said


def test_the_workers_import_the_package_that_started_them_installed_or_not(tmp_path):
    """``-S`` leaves out site-packages, where an install would be: what the child imports is
    found through the environment the worker is given alone, as in a checkout never installed."""
    env = worker_process.trusted_env(tmp_path)
    found = subprocess.run(
        [sys.executable, "-S", "-c", "import autograder.trusted; print(autograder.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == str(worker_process.ROOT / "__init__.py")
    bare = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    missing = subprocess.run(
        [sys.executable, "-S", "-c", "import autograder"], cwd=tmp_path, env=bare, capture_output=True, text=True
    )
    assert "No module named 'autograder'" in missing.stderr


def test_a_warm_runner_imports_what_its_children_would_and_skips_what_is_not_installed(tmp_path):
    """The sandbox's servers import, once, what every notebook's run would import in its child:
    a module missing from ``WARM_IF_INSTALLED`` is left out, not the server's end; the rest are
    imported before the server forks, from the untrusted side a sandbox sees."""
    from autograder.grading.sandbox.package import untrusted_pythonpath
    from autograder.untrusted.runner import WARM_IF_INSTALLED, WARM_IMPORTS

    code = (
        "import sys, json\n"
        "from autograder.core import forkserver\n"
        "from autograder.untrusted.runner import WARM_IMPORTS, WARM_IF_INSTALLED\n"
        "forkserver.warm_up(WARM_IMPORTS, 'the test', [*WARM_IF_INSTALLED, 'no_such_module_here'])\n"
        "print(json.dumps([sorted(sys.modules), sys.modules['autograder.checks'].__file__]))\n"
    )
    env = {**os.environ, "PYTHONPATH": untrusted_pythonpath(), "OPENBLAS_NUM_THREADS": "1", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    modules, checks = json.loads(done.stdout)
    assert set(WARM_IMPORTS) | set(WARM_IF_INSTALLED) <= set(modules)  # rich is in every lock
    assert "no_such_module_here" not in modules
    assert checks.endswith("autograder/checks.py") and "sandbox-code" in checks  # the sandbox's facade


BURNER = '''
import subprocess, sys, time

def main(argv):
    """Spin for argv[0] seconds of CPU here and as long in a child it waits for, then sleep argv[1]."""
    spin = "import time\\nend = time.process_time() + {0}\\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", spin.format(argv[0])], check=True)
    exec(spin.format(argv[0]))
    time.sleep(float(argv[1]))
    return 0
'''


@pytest.mark.parametrize(("spin", "sleep"), [(0.6, 0.0), (0.0, 1.2)], ids=["busy", "idle"])
def test_a_forked_job_is_charged_the_cpu_it_and_its_children_used(spin, sleep, tmp_path):
    """A profile's CPU seconds per job are the kernel's count for its child (and what that child
    waited for), not its wall time: two jobs side by side each report their own."""
    (tmp_path / "burner.py").write_text(BURNER)
    serve = (
        "import sys; from autograder.core import forkserver; sys.exit(forkserver.run((), 'burner', 'a test server'))"
    )
    env = {**worker_process.trusted_env(tmp_path), "PYTHONPATH": f"{worker_process.ROOT.parent}:{tmp_path}"}
    shared = forked.Shared(lambda: forked.ServerCommand([sys.executable, "-c", serve], env, "a test server"))
    try:
        outcome = shared.run([str(spin), str(sleep)], tmp_path, tmp_path / "job.log", Deadline(60))
    finally:
        if shared.server is not None:
            shared.server.stop()
    assert outcome is not None and outcome.status == "ok", outcome
    cpu = outcome.phases[forked.CPU]
    assert 2 * spin <= cpu < 2 * spin + 0.5, cpu  # both spins, and the child's Python starting
