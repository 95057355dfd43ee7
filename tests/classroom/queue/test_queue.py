"""Grading at scale: a class of 30 graded by three workers, each a host of its own (its own
container, scratch folder and reference cache, the Docker engine to start sandboxes), through a
real Redis, recorded by `jaxcourse grade --broker` on this machine.

While the class is graded, a worker is SIGKILLed in the middle of a job, Redis is restarted, and
the recorder itself is SIGKILLed; run again, the recorder finishes the class. Every grade must
equal the local grader's, and every student is recorded once.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys

import pytest

from autograder.core.course import Course
from classroom import environment
from classroom.grading.class_run import job_seconds
from classroom.queue.app import QUEUE, TASK, make_app
from classroom.queue.dispatch import ATTEMPTS, Dispatcher, Failed
from classroom.queue.jobs import make_job

from ...helpers.classroom import assert_graded_as_here, class_course, new_class, queue, sandboxes_mid_job, wait_for
from ...helpers.course import ASSIGNMENT, solved_notebook, write_submission
from ...helpers.submissions import wrong_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Right, wrong in one function, and broken: the notebooks a class hands in, 30 students.
KINDS = [
    None,
    "ring_wrong_direction",
    "layernorm_device0_only",
    "uses_all_gather",
    "fold_wrong_axis",
    "raises_at_import",
    "unfinished_function",
    None,
    "local_shape_no_error",
    None,
]
STUDENTS = {f"s{i:02d}": KINDS[i % len(KINDS)] for i in range(30)}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory, course, client, cpu_image):
    """The course set up for a class, its submissions, and its queue with three workers."""
    checkout = class_course(Course(course.root))
    deployment = new_class(tmp_path_factory.mktemp("qclass"), checkout)
    submitted = tmp_path_factory.mktemp("submitted")
    for student, wrong in STUDENTS.items():
        sub = wrong_submission(ASSIGNMENT, wrong) if wrong else None
        write_submission(
            submitted, student, solved_notebook(course, sub.functions if sub else None, sub.extra_cell if sub else None)
        )
    with queue(client, deployment, cpu_image, workers=3) as running:
        yield {"course": checkout, "submitted": submitted, "sandboxes": [], **running}


def _grade(classroom, out, *more):
    env = {
        **os.environ,
        "JAXCOURSE_ROOT": str(classroom["course"].root),
        "PYTHONUNBUFFERED": "1",
        environment.QUEUE_KEY: classroom["key"],
    }
    argv = [
        sys.executable,
        "-m",
        "jaxcourse",
        "grade",
        ASSIGNMENT,
        "--broker",
        classroom["broker"],
        "--submissions",
        str(classroom["submitted"]),
        "--out",
        str(out),
        "--quiet",
        *more,
    ]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _recorded(out):
    return len(list(out.glob("*/results.json")))


def _busy_worker(client, classroom):
    """A worker with a sandbox running for it: it is in the middle of a job. The sandboxes seen
    are kept for the test that they hold nothing of the class."""
    for box in sandboxes_mid_job(client):
        classroom["sandboxes"].append(box.attrs)
        for worker in classroom["workers"]:
            if box.labels["jaxcourse.sandbox"].startswith(worker.id[:12]):
                return worker
    return None


def test_a_class_survives_a_dead_worker_a_redis_restart_and_a_dead_recorder(classroom, client, tmp_path, course):
    out = tmp_path / "graded"
    recorder = _grade(classroom, out)
    victim = wait_for(lambda: _busy_worker(client, classroom), 240, "a worker in the middle of a job")
    victim.kill(signal="SIGKILL")
    wait_for(lambda: _recorded(out) >= 6, 300, "six students recorded")
    classroom["redis"].restart(timeout=5)
    wait_for(lambda: _recorded(out) >= 12, 300, "twelve students recorded after the Redis restart")
    recorder.send_signal(signal.SIGKILL)
    recorder.wait()
    done_before = _recorded(out)
    recorded_before = {path.parent.name for path in out.glob("*/results.json")}
    assert done_before < len(STUDENTS), "the recorder was killed after the class was done: kill it sooner"

    again = _grade(classroom, out)
    output, _ = again.communicate(timeout=900)
    assert again.returncode == 0, output
    summary = next(line for line in output.splitlines() if " submissions in " in line)
    assert summary.startswith(f"{len(STUDENTS)} submissions in"), summary
    assert f"{done_before} unchanged since the last run" in summary, output
    graded_on = dict(re.findall(r"^jaxcourse: (\S+) graded on (\S+) in [0-9.]+ s: ", output, re.M))
    assert set(graded_on) == set(STUDENTS) - recorded_before, output  # who graded each, once
    assert set(graded_on.values()) <= {worker.id[:12] for worker in classroom["workers"]}, graded_on

    assert_graded_as_here(classroom["course"], classroom["submitted"], out, STUDENTS)


def test_a_malformed_or_oversized_job_gets_a_clear_status_and_the_queue_goes_on(classroom):
    app = make_app(classroom["broker"], job_seconds(classroom["course"]))
    malformed = app.send_task(TASK, args=[{"assignment": ASSIGNMENT, "student": "eve", "notebook": 3}])
    huge = app.send_task(
        TASK,
        args=[
            {
                "version": 1,
                "id": "x",
                "assignment": ASSIGNMENT,
                "student": "eve",
                "notebook": " " * (21 << 20),
                "timestamp": None,
                "grading": {"engine": "", "course": "", "image": ""},
            }
        ],
    )
    first, second = malformed.get(timeout=120)["report"], huge.get(timeout=120)["report"]
    assert first["status"] == second["status"] == "invalid"
    assert first["message"].startswith("invalid job: the job has the wrong fields"), first["message"]
    assert "MB allowed" in second["message"], second["message"]
    assert first["score"] == 0 and {t["status"] for t in first["tests"]} == {"invalid"}


def test_a_job_whose_worker_raises_is_sent_again_and_recorded_failed_on_the_third_time(classroom, caplog):
    """A worker raises on a job only when something beside the notebook went wrong (Redis loading
    its data after a restart, a fault of its own): the job is sent again, and only the third
    failure is recorded, as the student's error. On a database no worker listens to, the test
    plays the worker: it stores each failure itself and counts the copies sent."""
    import re

    url = re.sub(r"/\d+$", "/1", classroom["broker"])
    app = make_app(url, 60.0)
    caplog.set_level(logging.INFO, logger="classroom")
    dispatcher = Dispatcher(app, 600.0, b"k" * 32)
    job = make_job(ASSIGNMENT, "flaky", b"{}", None, {"engine": "", "course": "", "image": ""})
    client = app.backend.client
    client.flushdb()
    dispatcher.send(job)
    for attempt in range(1, ATTEMPTS + 1):
        assert client.llen(QUEUE) == attempt  # one copy per attempt, none taken
        app.backend.mark_as_failure(job["id"], ConnectionError(f"loading the dataset ({attempt})"))
        done = dispatcher.poll()
        assert bool(done) == (attempt == ATTEMPTS), (attempt, done, caplog.messages)
    [(_, failed)] = done
    assert isinstance(failed, Failed) and failed.reason.startswith("the worker failed 3 times"), failed
    assert "loading the dataset (3)" in failed.reason
    assert caplog.messages == [
        f"jaxcourse: a worker failed grading flaky (loading the dataset ({n})); sending it again" for n in (1, 2)
    ]
    client.flushdb()


def test_a_worker_whose_image_is_stale_is_refused(classroom, client, cpu_image, tmp_path):
    stale = "jaxcourse-stale:cpu"
    client.images.build(
        fileobj=_dockerfile(f"FROM {cpu_image}\nLABEL org.jaxcourse.lock-sha256=0ldl0ck\n"), tag=stale, rm=True
    )
    deployment = new_class(tmp_path / "stale", classroom["course"])
    from classroom.hub import deploy

    options = deploy.worker_options(deployment, cpu_image, classroom["network"], 9, sandbox_image=stale)
    options["environment"][environment.BROKER] = classroom["broker"]
    container = client.containers.run(detach=True, **options)
    try:
        code = container.wait(timeout=180)["StatusCode"]
        logs = container.logs().decode()
    finally:
        container.remove(force=True)
        client.images.remove(stale)
    assert code == 2, logs
    assert "the sandbox image jaxcourse-stale:cpu was built from lock 0ldl0ck" in logs
    assert "rebuild it with `jaxcourse image build --variant cpu`" in logs


def _dockerfile(text):
    import io

    return io.BytesIO(text.encode())


def test_the_broker_needs_its_password_and_no_sandbox_sees_it(classroom, client):
    """The password is the broker's only door; a worker holds it, and the sandboxes it starts for
    students' code get neither it, nor the engine, nor any class state."""
    import redis

    url = classroom["broker"]
    password = url.split("//:")[1].split("@")[0]
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis.from_url(url.replace(f":{password}@", "")).ping()
    assert redis.Redis.from_url(url).ping()
    for worker in classroom["workers"]:
        worker.reload()
    running = [w for w in classroom["workers"] if w.status == "running"]  # an earlier test killed one
    assert running
    for worker in running:  # in the environment, never on a command line `ps` shows
        processes = worker.top(ps_args="-eo pid,args")["Processes"]
        assert processes and not any(password in " ".join(p) for p in processes), processes
        assert password not in json.dumps([worker.attrs["Config"]["Cmd"], worker.attrs["Config"]["Entrypoint"]])
    seen = classroom["sandboxes"]
    assert seen, "no sandbox was seen while the class was graded"
    for attrs in seen:
        config = json.dumps([attrs["Config"]["Env"], attrs["Config"]["Cmd"], attrs["Config"]["Entrypoint"]])
        assert password not in config
        mounts = {m["Destination"] for m in attrs["Mounts"]}
        assert mounts <= {
            "/job",
            "/out",
            "/opt/grader/autograder",
            "/opt/venv/lib/python3.11/site-packages/autograder",
            "/xla",  # the class's compile cache (read-only; tests/adversarial's poisons_compile_cache)
        }, mounts
        assert attrs["HostConfig"]["NetworkMode"] == "none"
