"""Warm sandboxes: containers started ahead of need, each used for one submission and removed,
locked down exactly as a cold one, and never handed a second job."""

from __future__ import annotations

import time

import pytest

from autograder.grading.pipeline.grader import grader_for
from autograder.grading.sandbox import docker_sandbox
from autograder.grading.sandbox.docker_sandbox import LABEL, DockerSandbox
from autograder.grading.sandbox.limits import Limits

from ..helpers.course import ASSIGNMENT, solved_notebook, write_submission

pytestmark = pytest.mark.docker


def _containers(client, box):
    return [c for c in client.containers.list(all=True, filters={"label": LABEL}) if c.labels[LABEL] == box.owner]


def _eventually(condition, what, seconds=120.0):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:g} s: {what}")
        time.sleep(0.2)


def _ready(box, count=1):
    return box._pool is not None and len(box._pool._ready) >= count


@pytest.fixture
def warm_grader(course, client, cpu_image, tmp_path):
    """A grader whose docker sandbox keeps one container warm; every container it made is gone
    once the sandbox is closed."""
    box = DockerSandbox(cpu_image, Limits(), client, warm=1)
    yield grader_for(ASSIGNMENT, course, tmp_path / "cache", sandbox=box), box
    box.close()
    _eventually(lambda: not _containers(client, box), "the sandbox's containers removed after close()", 60)


def _isolation(attrs):
    """What locks a container down, as the engine reports it: all but its command line."""
    host = attrs["HostConfig"]
    keys = (
        "NetworkMode",
        "Memory",
        "MemorySwap",
        "NanoCpus",
        "PidsLimit",
        "ReadonlyRootfs",
        "Tmpfs",
        "CapDrop",
        "SecurityOpt",
        "Init",
        "LogConfig",
    )
    mounts = sorted((m["Destination"], m["RW"]) for m in attrs["Mounts"])
    config = attrs["Config"]
    return {k: host[k] for k in keys}, mounts, config["User"], config["WorkingDir"], sorted(config["Env"])


def test_a_warm_container_is_locked_down_exactly_as_a_cold_one(warm_grader, course, client, tmp_path):
    grader, box = warm_grader
    notebook = write_submission(tmp_path, "ann", solved_notebook(course))
    assert grader.grade("ann", notebook).status == "graded"  # cold: it says what to warm
    _eventually(lambda: _ready(box), "a warm container")
    slot = box._pool._ready[0]
    cold = client.containers.create(
        image=box.image,
        **box._with_cache(box._settings(slot.folder / "job", slot.folder / "out", slot.spec.timeout), slot.spec.cache),
    )
    try:
        slot.container.reload()
        assert slot.container.status == "running"
        assert _isolation(slot.container.attrs) == _isolation(cold.attrs)
        entry = slot.container.attrs["Config"]["Entrypoint"]
        assert entry[entry.index("-m") + 2].startswith("--warm=")  # it waits for its job
    finally:
        cold.remove(force=True)


def test_each_submission_has_a_fresh_container_and_the_same_grade(warm_grader, course, client, tmp_path):
    grader, box = warm_grader
    used, real_run = [], box.run

    def run(job, out, timeout, cache=None):
        slot = box._held.get(job.parent)
        used.append(slot.container.id if slot is not None else "cold")
        return real_run(job, out, timeout, cache)

    box.run = run
    reports = []
    for student in ("ann", "bob", "cid"):
        if reports:
            _eventually(lambda: _ready(box), "a warm container for the next student")
        notebook = write_submission(tmp_path, student, solved_notebook(course))
        reports.append(grader.grade(student, notebook))
    # The first student's run is cold (after the one that fills the class's compile cache): it
    # says what to warm. Each later student has a warm container of its own.
    *cold_runs, first_warm, second_warm = used
    assert set(cold_runs) == {"cold"} and "cold" != first_warm != second_warm != "cold", used
    alive = {c.id for c in _containers(client, box)}
    assert not alive & {first_warm, second_warm}, "a container was kept after its submission"
    cold, *warm = [[(t.name, t.score, t.status) for t in r.tests] for r in reports]
    assert all(r.status == "graded" for r in reports) and warm == [cold, cold]
    assert "sandbox: container create and start" not in reports[1].profile.seconds


def test_a_workspace_given_back_unused_takes_its_container_with_it(warm_grader, course, tmp_path):
    grader, box = warm_grader
    grader.grade("ann", write_submission(tmp_path, "ann", solved_notebook(course)))
    _eventually(lambda: _ready(box), "a warm container")
    work = box.workspace("unused-")
    container = box._held[work].container
    box.release(work)
    with pytest.raises(Exception, match="No such container"):
        container.reload()


def test_a_warm_container_that_gave_up_waiting_is_replaced_by_a_cold_run(
    course, client, cpu_image, tmp_path, monkeypatch
):
    monkeypatch.setattr(docker_sandbox, "IDLE", 1.0)  # its runner waits one second for a job, then exits
    box = DockerSandbox(cpu_image, Limits(), client, warm=1)
    grader = grader_for(ASSIGNMENT, course, tmp_path / "cache", sandbox=box)
    try:
        first = grader.grade("ann", write_submission(tmp_path, "ann", solved_notebook(course)))
        _eventually(lambda: _ready(box), "a warm container")
        slot = box._pool._ready[0]
        _eventually(lambda: slot.container.reload() or slot.container.status == "exited", "the runner giving up")
        second = grader.grade("bob", write_submission(tmp_path, "bob", solved_notebook(course)))
        assert second.status == "graded" and second.score == first.score
        assert "sandbox: container create and start" in second.profile.seconds  # run cold, in its folders
    finally:
        box.close()
