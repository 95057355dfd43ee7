"""What the class tests share: a course copy set up for a class (its lock and tight limits), the
queue's Redis and workers started with the deployment's own container options."""

from __future__ import annotations

import contextlib
import csv
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autograder.core.course import Course
from autograder.engine.containers import remove
from classroom.classdir import ClassDir
from classroom.hub import deploy

from .course import ASSIGNMENT, REPO, total

# Tight limits: an endless loop costs seconds, and a job's bound (so Redis's visibility timeout)
# stays short.
TEST_LIMITS = "[sandbox]\ntimeout = 60\ntest_timeout = 6\n"
# A cell that keeps a right notebook in its sandbox for seconds, where a test must catch a job in
# progress: a lane runs one in about a second, too short to be seen between two looks.
SLOW_CELL = "import time\ntime.sleep(6)"


def class_course(course: Course, limits: str = TEST_LIMITS) -> Course:
    """``course`` with the lock its images are built from and a jaxcourse.toml of ``limits``."""
    (course.root / "requirements").mkdir(exist_ok=True)
    shutil.copy(REPO / "requirements" / "cpu.lock", course.root / "requirements" / "cpu.lock")
    (course.root / "jaxcourse.toml").write_text(limits)
    return course


def container_ip(container: Any, network: str) -> str:
    container.reload()
    ip: str = container.attrs["NetworkSettings"]["Networks"][network]["IPAddress"]
    return ip


@contextlib.contextmanager
def queue(client: Any, deployment: deploy.Deployment, image: str, workers: int) -> Iterator[dict[str, Any]]:
    """Redis and ``workers`` grading workers for ``deployment``, each worker a "host" of its own
    (its own container, scratch folder, reference cache), on the class's queue network; yields
    {"redis", "workers", "network", "broker" (reachable from this machine), "key" (what the workers
    sign outcomes with: a recorder here needs it as JAXCOURSE_QUEUE_KEY)}. All removed after."""
    network = f"{deployment.name}-queue"
    client.networks.create(network, driver="bridge", labels={deploy.LABEL: deployment.name})
    started: list[Any] = []
    try:
        redis = client.containers.run(
            name=f"{deployment.name}-redis", detach=True, **deploy.redis_options(deployment, network)
        )
        started.append(redis)
        deploy.wait_healthy(redis)
        for number in range(1, workers + 1):
            options = deploy.worker_options(deployment, image, network, number)
            started.append(client.containers.run(name=f"{deployment.name}-worker-{number}", detach=True, **options))
        host_broker = deployment.broker().replace(f"@{deployment.name}-redis:", f"@{container_ip(redis, network)}:")
        yield {
            "redis": redis,
            "workers": started[1:],
            "network": network,
            "broker": host_broker,
            "key": deployment.classdir.secret("queue_key"),
        }
    finally:
        for container in started:
            remove(container)
        for sandbox in client.containers.list(all=True, filters={"label": "jaxcourse.sandbox"}):
            if any(sandbox.labels["jaxcourse.sandbox"].startswith(w.id[:12]) for w in started):
                remove(sandbox)
        for net in client.networks.list(names=[network]):
            net.remove()


def local_reports(checkout: Course, submitted: Path, students: dict[str, str | None]) -> dict[str | None, Any]:
    """Each kind of notebook in ``students`` ({student: wrong submission or None}) graded once
    by the local grader (docker sandbox, the checkout's limits), as the reports' JSON."""
    from autograder.grading.pipeline.grader import grader_for
    from autograder.grading.record.batch import open_sandbox
    from autograder.grading.sandbox import limits

    lim = limits.load(checkout.root, ASSIGNMENT)
    grader = grader_for(
        ASSIGNMENT,
        checkout,
        timeout=lim.timeout,
        test_timeout=lim.test_timeout,
        sandbox=open_sandbox("docker", lim=lim),
    )
    first = {wrong: student for student, wrong in reversed(students.items())}
    return {
        wrong: grader.grade(student, submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").to_json()
        for wrong, student in first.items()
    }


def assert_graded_as_here(checkout: Course, submitted: Path, out: Path, students: dict[str, str | None]) -> None:
    """Every student in ``out`` once, each report equal to the local grader's for that notebook,
    and the right notebook at full marks."""
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert sorted(r["student_id"] for r in rows) == sorted(students)  # each recorded once
    local = local_reports(checkout, submitted, students)
    for student, wrong in students.items():
        got = json.loads((out / student / "results.json").read_text())
        want = local[wrong]
        assert (got["status"], got["score"]) == (want["status"], want["score"]), (student, wrong, got["message"])
        assert [(t["name"], t["score"], t["message"]) for t in got["tests"]] == [
            (t["name"], t["score"], t["message"]) for t in want["tests"]
        ], student
    assert local[None]["score"] == total(ASSIGNMENT)


def new_class(tmp: Path, checkout: Course) -> deploy.Deployment:
    return deploy.Deployment(ClassDir(tmp).init(checkout), checkout)


def running_a_job(uids: list[str]) -> bool:
    """Whether a sandbox container runs a submission, from the owners of the processes in it: a
    fresh one runs it as uid 1000 and a lane as a user of the job's own, while a lane between jobs
    runs only root's processes (its init and its server)."""
    return any(uid.strip() not in ("", "0") for uid in uids)


def sandboxes_mid_job(client: Any) -> list[Any]:
    """The sandbox containers on ``client``'s engine that are running a submission now."""
    from docker.errors import APIError

    busy = []
    for box in client.containers.list(filters={"label": "jaxcourse.sandbox"}):
        try:
            processes = box.top(ps_args="-o pid,uid")["Processes"] or []
        except APIError:  # it ended while we looked
            continue
        if running_a_job([uid for _, uid in processes]):
            busy.append(box)
    return busy


def wait_for(predicate: Any, timeout: float, what: str, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
