"""Lanes: long-lived sandbox containers that grade many submissions, one at a time, each as a user
of its own. A lane is locked down as a fresh container is, but for what its server needs; a
submission graded in one gets the grade a fresh container gives; and nothing one submission does
there (a process left running, files left behind, an attack on the server, its memory) reaches the
next one, which is graded in the same container as if it had been alone."""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograder.grading.pipeline.grader import grader_for
from autograder.grading.sandbox.docker_sandbox import LABEL, NO_SYSTEM_V_IPC, DockerSandbox
from autograder.grading.sandbox.lanes import CAPABILITIES, SandboxLost
from autograder.grading.sandbox.limits import Limits

from ..adversarial.cases import floods_results_with_files
from ..helpers.course import ASSIGNMENT, solved_notebook, write_submission

pytestmark = pytest.mark.docker

# Left behind by a submission: a process of its own session that waits for its submission's end,
# then tries for a minute to spoil what comes next (the next one's results, its job, its scratch), and files wherever it
# may write. It also tries to stop the lane's server, which is root's.
LEAVES_A_PROCESS = r"""
import os, signal, time
runner = os.getpid()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.umask(0)
        os.closerange(0, 1024)  # nothing of its submission's to wait for
        while True:  # its own submission's end first: what it spoils is the next one's
            try:
                os.kill(runner, 0)
                time.sleep(0.02)
            except ProcessLookupError:
                break
        end = time.monotonic() + 60
        while time.monotonic() < end:
            for path in ("/out/results.json", "/tmp/planted", "/dev/shm/planted"):
                try:
                    with open(path, "w") as f:
                        f.write("{}")
                except OSError:
                    pass
            try:
                with open("/job/cells.json") as f:
                    open("/tmp/stolen", "w").write(f.read())
            except OSError:
                pass
            time.sleep(0.05)
    os._exit(0)
for pid in (1, os.getppid()):
    for sig in (signal.SIGKILL, signal.SIGSTOP):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
for path in (os.path.expanduser("~/planted"), "/tmp/planted", "/dev/shm/planted", "/home/lanes/planted"):
    try:
        open(path, "w").write("x")
        os.chmod(path, 0o777)
    except OSError:
        pass
import ctypes
libc = ctypes.CDLL(None)
libc.shmget(0, 1 << 20, 0o1000 | 0o666), libc.msgget(0, 0o1000 | 0o666), libc.semget(0, 1, 0o1000 | 0o666)
"""

# The next submission's own cell: it raises, and so loses every point, if anything of the one
# before it is still there.
FINDS_NOTHING_LEFT = r"""
import os
mine = os.getuid()
others = []
for name in os.listdir("/proc"):
    if name.isdigit():
        try:
            uid = os.stat(f"/proc/{name}").st_uid
        except OSError:
            continue
        if uid not in (0, mine):
            others.append((name, uid))
assert not others, f"processes of another user: {others}"
for folder in ("/tmp", "/dev/shm", "/home/lanes", "/out"):
    left = [name for name in os.listdir(folder) if name != str(mine)]
    assert not left, f"left in {folder}: {left}"
assert mine not in (0, 1000), f"not a user of its own: {mine}"
for kind in ("shm", "msg", "sem"):
    with open(f"/proc/sysvipc/{kind}") as table:
        left = table.readlines()[1:]
    assert not left, f"System V {kind} left: {left}"
"""


def _containers(client, box):
    return [c for c in client.containers.list(all=True, filters={"label": LABEL}) if c.labels[LABEL] == box.owner]


def _eventually(condition, what, seconds=120.0):
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:g} s: {what}")
        time.sleep(0.2)
    return found


def _free(box, count=1):
    return box._pool is not None and len(box._pool._free) >= count


@pytest.fixture
def lane_grader(course, client, cpu_image, tmp_path):
    """A grader whose docker sandbox keeps one lane; every container it made is gone once the
    sandbox is closed."""
    box = DockerSandbox(cpu_image, Limits(), client, lanes=1)
    yield grader_for(ASSIGNMENT, course, tmp_path / "cache", sandbox=box), box
    box.close()
    _eventually(lambda: not _containers(client, box), "the sandbox's containers removed after close()", 60)


def _which(box):
    """Records, per run, the id of the lane's container it ran in, or "cold"."""
    used, real_run = [], box.run

    def run(job, out, timeout, cache=None):
        lane = box._held.get(job.parent)
        used.append(lane.container.id if lane is not None else "cold")
        return real_run(job, out, timeout, cache)

    box.run = run
    return used


def _isolation(attrs):
    """What locks a container down, as the engine reports it."""
    host = attrs["HostConfig"]
    keys = ("NetworkMode", "Memory", "MemorySwap", "NanoCpus", "PidsLimit", "ReadonlyRootfs", "CapDrop")
    keys += ("SecurityOpt", "Init", "LogConfig")
    mounts = sorted((m["Destination"], m["RW"]) for m in attrs["Mounts"])
    return {k: host[k] for k in keys}, mounts, attrs["Config"]["WorkingDir"], sorted(attrs["Config"]["Env"])


def _grade(grader, tmp_path, student, course, extra_cell=None):
    return grader.grade(student, write_submission(tmp_path, student, solved_notebook(course, extra_cell=extra_cell)))


def _marks(report):
    return [(t.name, t.score, t.status) for t in report.tests]


def test_a_lane_is_locked_down_as_a_fresh_container_but_for_what_its_server_needs(
    lane_grader, course, client, tmp_path
):
    grader, box = lane_grader
    assert _grade(grader, tmp_path, "ann", course).status == "graded"  # cold: it says which cache
    _eventually(lambda: _free(box), "a lane")
    lane = box._pool._free[0]
    fresh = client.containers.create(
        image=box.image, **box._with_cache(box._settings(lane.job, lane.out, 300), lane.cache)
    )
    try:
        lane.container.reload()
        attrs = lane.container.attrs
        assert lane.container.status == "running"
        isolation = _isolation(attrs)
        environment = set(isolation[3]) - {"OPENBLAS_NUM_THREADS=1"}
        assert isolation[:3] == _isolation(fresh.attrs)[:3] and environment == set(_isolation(fresh.attrs)[3])
        assert attrs["HostConfig"]["CapDrop"] == ["ALL"] and sorted(attrs["HostConfig"]["CapAdd"]) == sorted(
            CAPABILITIES
        )
        assert attrs["Config"]["User"] == "0:0" and fresh.attrs["Config"]["User"] == "1000:100"
        assert attrs["HostConfig"]["Sysctls"] == NO_SYSTEM_V_IPC and not fresh.attrs["HostConfig"].get("Sysctls")
        tmpfs, fresh_tmpfs = attrs["HostConfig"]["Tmpfs"], fresh.attrs["HostConfig"]["Tmpfs"]
        assert tmpfs == {**fresh_tmpfs, "/home/lanes": "size=256m,mode=1777"}  # where each child makes its home
    finally:
        fresh.remove(force=True)


def test_a_lane_grades_one_submission_after_another_as_fresh_containers_do(lane_grader, course, tmp_path):
    grader, box = lane_grader
    used = _which(box)
    starting, run_cold = [], box._run_cold

    def cold(job, out, timeout, cache=None):
        starting.append((cache is not None and cache.writable, box._pool is not None))
        return run_cold(job, out, timeout, cache)

    box._run_cold = cold
    reports = []
    for student in ("ann", "bob", "cid"):
        if reports:
            _eventually(lambda: _free(box), "the lane free for the next student")
        reports.append(_grade(grader, tmp_path, student, course))
    # The run that fills the class's compile cache is fresh; the lane, for that cache read-only,
    # starts beside it. The last two share the lane's one container.
    assert used[0] == "cold" and starting[0] == (True, True), (used, starting)
    assert used[-2] == used[-1] != "cold", used
    _eventually(lambda: _free(box), "the lane back")
    cache = box._pool._free[0].cache
    assert cache.path.stat().st_mode & 0o777 == 0o755  # its container's user wrote it during the fill only
    assert all(r.status == "graded" for r in reports)
    assert _marks(reports[1]) == _marks(reports[2]) == _marks(reports[0])
    assert "sandbox: lane run" in reports[1].profile.seconds and "sandbox: CPU" in reports[1].profile.seconds


def test_nothing_a_submission_leaves_in_a_lane_reaches_the_next(lane_grader, course, tmp_path):
    grader, box = lane_grader
    used = _which(box)
    reference = _grade(grader, tmp_path, "ann", course)  # fresh: it says which cache the lane is for
    _eventually(lambda: _free(box), "a lane")
    attacker = _grade(grader, tmp_path, "eve", course, LEAVES_A_PROCESS)
    _eventually(lambda: _free(box), "the lane free again")
    victim = _grade(grader, tmp_path, "bob", course, FINDS_NOTHING_LEFT)
    assert used[-2] == used[-1] != "cold", "the two did not share the lane: the test proves nothing"
    assert reference.status == "graded" and reference.score == reference.max_score
    assert attacker.status == "graded" and attacker.score == reference.score  # its own work is graded
    assert victim.status == "graded" and _marks(victim) == _marks(reference)


def test_a_submission_that_runs_out_of_memory_in_a_lane_leaves_it_serving(lane_grader, course, tmp_path):
    grader, box = lane_grader
    used = _which(box)
    _grade(grader, tmp_path, "ann", course)
    _eventually(lambda: _free(box), "a lane")
    bomb = "blocks = []\nwhile True:\n    blocks.append(bytearray(64 << 20))"
    crashed = _grade(grader, tmp_path, "eve", course, bomb)
    _eventually(lambda: _free(box), "the lane free again")
    after = _grade(grader, tmp_path, "bob", course)
    assert crashed.status == "crashed" and "ran out of memory (the limit is 2g)" in crashed.message
    assert used[-2] == used[-1] != "cold", used
    assert after.status == "graded" and after.score == after.max_score


def test_a_submission_that_floods_its_results_in_a_lane_is_refused_and_the_lane_serves_on(
    lane_grader, course, tmp_path
):
    """The results folder is the one the grader reads: a child that fills it (a locked folder,
    then a million files) is stopped, graded invalid for it, and its files are gone before the
    next submission, in the same container, finds the folder empty."""
    grader, box = lane_grader
    used = _which(box)
    _grade(grader, tmp_path, "ann", course)
    _eventually(lambda: _free(box), "a lane")
    flooded = _grade(grader, tmp_path, "eve", course, floods_results_with_files.EXTRA_CELL)
    _eventually(lambda: _free(box), "the lane free again")
    after = _grade(grader, tmp_path, "bob", course, FINDS_NOTHING_LEFT)
    assert flooded.status == floods_results_with_files.STATUS == "invalid"
    assert floods_results_with_files.MESSAGE in flooded.message
    assert used[-2] == used[-1] != "cold", used
    assert after.status == "graded" and after.score == after.max_score


def test_a_lane_whose_container_is_gone_is_replaced(lane_grader, course, client, tmp_path):
    grader, box = lane_grader
    used = _which(box)
    _grade(grader, tmp_path, "ann", course)
    _eventually(lambda: _free(box), "a lane")
    gone = box._pool._free[0].container.id
    client.containers.get(gone).kill()
    _eventually(lambda: box._pool._free[0].gone, "the lane seen gone")
    assert _grade(grader, tmp_path, "bob", course).status == "graded"  # fresh, while a lane starts
    _eventually(lambda: _free(box), "a new lane")
    assert _grade(grader, tmp_path, "cid", course).status == "graded"
    assert used[-2] == "cold" and used[-1] not in ("cold", gone), used


def test_a_lane_ends_when_its_grader_is_gone(lane_grader, course, tmp_path):
    grader, box = lane_grader
    _grade(grader, tmp_path, "ann", course)
    _eventually(lambda: _free(box), "a lane")
    lane = box._pool._free[0]
    lane.stream._sock.shutdown(socket.SHUT_RDWR)  # as a killed grader's connection ends: so does the server's stdin
    _eventually(lambda: lane.container.reload() or lane.container.status == "exited", "the lane's server exiting", 30)


SLEEPS = "import time\ntime.sleep(60)"  # a job still running when the test acts on its lane


def _running_a_job(box):
    """The lane that runs a job now (its server said the child's pid), or None."""
    for lane in list(box._held.values()):
        event = lane.events.get(lane.tags, {})
        if "pid" in event and "status" not in event:
            return lane
    return None


def _runs_cold(box):
    """Records, per fresh container, the job folder it ran on."""
    ran, run_cold = [], box._run_cold

    def cold(job, out, timeout, cache=None):
        ran.append(job)
        return run_cold(job, out, timeout, cache)

    box._run_cold = cold
    return ran


def test_a_job_whose_lane_left_before_it_started_runs_in_a_fresh_container(lane_grader, course, client, tmp_path):
    """A lane's server that leaves between the lane's handing out and its job's request (its ten
    idle minutes up, or dead): nothing of the job ran, so it runs in a fresh container on the same
    folders and keeps its marks; the lane is removed and another started."""
    import docker.errors

    grader, box = lane_grader
    reference = _grade(grader, tmp_path, "ann", course)
    _eventually(lambda: _free(box), "a lane")
    cold, take, left = _runs_cold(box), box._pool.take, []

    def taken_as_it_leaves():
        lane = take()
        lane.stream._sock.shutdown(socket.SHUT_WR)  # its stdin ends: the server exits, as after ten idle minutes
        _eventually(lambda: lane.gone, "the lane's server gone", 30)
        left.append(lane)
        box._pool.take = take
        return lane

    box._pool.take = taken_as_it_leaves
    report = _grade(grader, tmp_path, "bob", course)
    assert left and cold == [left[0].job], cold  # it ran, once, in a fresh container
    assert report.status == "graded" and _marks(report) == _marks(reference), report.message
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(left[0].container.id)
    _eventually(lambda: _free(box), "a new lane")
    assert box._pool._free[0].container.id != left[0].container.id


def test_a_lane_killed_from_outside_mid_job_grades_nothing(lane_grader, course, client, tmp_path):
    """No process of a job may signal its lane's server: a lane SIGKILLed under a job was killed
    from outside, so the grading raises (a queue sends the job again) instead of marking it
    crashed; the next submission is graded as usual."""
    grader, box = lane_grader
    _grade(grader, tmp_path, "ann", course)
    _eventually(lambda: _free(box), "a lane")
    with ThreadPoolExecutor(1) as pool:
        grading = pool.submit(_grade, grader, tmp_path, "bob", course, SLEEPS)
        lane = _eventually(lambda: _running_a_job(box), "bob's job running in the lane", 60)
        client.containers.get(lane.container.id).kill()
        with pytest.raises(SandboxLost, match="killed from outside its job"):
            grading.result(timeout=60)
    _eventually(lambda: _free(box), "a new lane")
    assert _grade(grader, tmp_path, "cid", course).status == "graded"


class EngineLine:
    """A socket that stands for the Docker engine's, passing every byte to the real one until
    ``cut`` closes it and every connection through it, as a lost node's engine goes; ``mend``
    listens again."""

    def __init__(self, path, engine):
        self.path, self.engine, self.connections = path, engine, []
        self.mend()

    def mend(self):
        self.path.unlink(missing_ok=True)
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(str(self.path))
        self.listener.listen()
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def cut(self):
        # Shut first: a close alone leaves the thread blocked in accept() holding the socket, and it
        # lets one more connection through to the engine.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()  # the socket's file stays, refusing, as a dead engine's does
        for connection in self.connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()

    def _accept(self, listener):
        while True:
            try:
                near, _ = listener.accept()
            except OSError:
                return
            far = socket.socket(socket.AF_UNIX)
            far.connect(self.engine)
            self.connections += [near, far]
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source, sink):
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)  # a half-close passes on: a lane's stdin ends through the line too


@pytest.fixture
def cut_off_grader(course, client, cpu_image, tmp_path):
    """A grader with one lane whose engine is reached through an ``EngineLine``."""
    import docker

    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    assert host.startswith("unix://"), f"this test passes the engine's unix socket through a line: DOCKER_HOST={host}"
    with tempfile.TemporaryDirectory(prefix="jaxcourse-engine-") as folder:
        line = EngineLine(Path(folder) / "docker.sock", host.removeprefix("unix://"))
        box = DockerSandbox(cpu_image, Limits(), docker.DockerClient(base_url=f"unix://{line.path}"), lanes=1)
        yield grader_for(ASSIGNMENT, course, tmp_path / "cache", sandbox=box), box, line
        line.mend()
        box.close()
        for container in _containers(client, box):  # what the cut line left on the engine
            container.remove(force=True)


def test_a_lane_whose_engine_stops_answering_mid_job_grades_nothing(cut_off_grader, course, tmp_path):
    """A lost node takes its engine with its lanes: the job's stream ends and the engine does not
    answer, which says nothing of the job, so the grading raises (a queue sends the job to a
    worker that is left) and the lane, which cannot be removed, is left for the next run."""
    grader, box, line = cut_off_grader
    _grade(grader, tmp_path, "ann", course)
    _eventually(lambda: _free(box), "a lane")
    with ThreadPoolExecutor(1) as pool:
        grading = pool.submit(_grade, grader, tmp_path, "bob", course, SLEEPS)
        _eventually(lambda: _running_a_job(box), "bob's job running in the lane", 60)
        line.cut()
        with pytest.raises(SandboxLost, match="the Docker engine did not answer"):
            grading.result(timeout=60)
