"""A class's grading spread over a Docker Swarm: Redis on the manager speaking TLS, the workers a
Swarm service on two nodes (each a container with its own engine), each grading in sandboxes on
its own node. One node is lost in the middle of a job; the class is still graded, every student
once, each grade equal to the local grader's.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys

import pytest

from autograder.core import environment
from autograder.core.course import Course
from autograder.engine import swarm
from autograder.hub import deploy, swarm_queue
from autograder.hub.images import build_redis

from ..helpers.classroom import assert_graded_as_here, class_course, container_ip, new_class, wait_for
from ..helpers.course import ASSIGNMENT, REPO, solved_notebook, write_submission
from ..helpers.submissions import wrong_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]

KINDS = [None, "ring_wrong_direction", None, "raises_at_import", None]
STUDENTS = {f"n{i:02d}": KINDS[i % len(KINDS)] for i in range(10)}


@pytest.fixture(scope="module")
def swarm_class(tmp_path_factory, course, swarm_nodes, cpu_image):
    """The class's queue on the swarm: its overlay network, Redis with TLS on the manager, two
    workers on the nodes labelled for grading; and the submissions."""
    client = swarm_nodes.client
    build_redis(client, REPO, say=lambda _: None)  # seconds from the layer cache
    checkout = class_course(Course(course.root))
    deployment = new_class(tmp_path_factory.mktemp("swarmclass"), checkout)
    submitted = tmp_path_factory.mktemp("swarm-submitted")
    for student, wrong in STUDENTS.items():
        sub = wrong_submission(ASSIGNMENT, wrong) if wrong else None
        write_submission(submitted, student,
                         solved_notebook(course, sub.functions if sub else None, sub.extra_cell if sub else None))  # fmt: skip
    for node in swarm_nodes.nodes:
        client.nodes.get(node.node_id).update({"Role": "worker", "Availability": "active",
                                               "Labels": {swarm_queue.GRADE_LABEL: "yes"}})  # fmt: skip
    said = []
    swarm_queue.start(client, deployment, cpu_image, said.append)  # `hub up --swarm`'s queue
    try:
        redis = client.containers.get(f"{deployment.name}-redis")
        client.networks.get(swarm_nodes.network).connect(redis)  # the recorder here reaches it on the bridge
        scaled = _cli("workers", "scale", "2", "--class", str(deployment.classdir.root), root=checkout.root)
        assert scaled.returncode == 0 and scaled.stdout == f"{deployment.name}-workers: 2 workers\n", scaled
        host_broker = swarm_queue.broker(deployment).replace(
            f"@{deployment.name}-redis:", f"@{container_ip(redis, swarm_nodes.network)}:"
        )
        yield {"deployment": deployment, "course": checkout, "submitted": submitted, "said": said,
               "service": client.services.get(f"{deployment.name}-workers"), "redis": redis,
               "broker": host_broker, "ca": str(swarm_queue.tls(deployment).ca)}  # fmt: skip
    finally:
        deploy.down(deployment, say=lambda _: None)


def _cli(*argv, root):
    env = {**os.environ, environment.ROOT: str(root)}
    return subprocess.run([sys.executable, "-m", "autograder.cli", *argv], env=env, capture_output=True, text=True)


def _running_tasks(service):
    service.reload()
    return [t for t in service.tasks() if t["Status"]["State"] == "running" and t["DesiredState"] == "running"]


def _graders(swarm_class):
    """The worker host names in the outcomes stored so far, by job."""
    import redis

    url = swarm_class["broker"]
    store = redis.Redis.from_url(url, ssl_cert_reqs="required", ssl_ca_certs=swarm_class["ca"],
                                 ssl_check_hostname=False)  # fmt: skip
    found = {}
    for key in store.scan_iter("celery-task-meta-*"):
        meta = json.loads(store.get(key))
        if meta.get("status") == "SUCCESS":
            found[key.decode()] = meta["result"]["worker"]
    return found


def _sandbox_on(node):
    try:
        return node.docker("ps", "-q", "--filter", "label=jaxcourse.sandbox", timeout=10)
    except (swarm.SwarmError, subprocess.TimeoutExpired):
        return ""


def test_workers_on_two_nodes_grade_over_tls_and_a_lost_node_loses_nothing(swarm_class, swarm_nodes, tmp_path):
    service = swarm_class["service"]
    tasks = wait_for(lambda: len(_running_tasks(service)) == 2 and _running_tasks(service), 180, "two workers running")
    assert {t["NodeID"] for t in tasks} == {n.node_id for n in swarm_nodes.nodes}, "one worker per node"

    out = tmp_path / "graded"
    env = {**os.environ, environment.ROOT: str(swarm_class["course"].root), "PYTHONUNBUFFERED": "1",
           environment.QUEUE_KEY: swarm_class["deployment"].classdir.secret("queue_key"),
           environment.BROKER_CA: swarm_class["ca"]}  # fmt: skip
    argv = [sys.executable, "-m", "autograder.cli", "grade", ASSIGNMENT, "--broker", swarm_class["broker"],
            "--submissions", str(swarm_class["submitted"]), "--out", str(out), "--quiet"]  # fmt: skip
    recorder = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    names = {n.name: n for n in swarm_nodes.nodes}
    both = wait_for(lambda: len({w.rpartition("-worker-")[0] for w in _graders(swarm_class).values()}) == 2,
                    600, "an outcome from each node's worker")  # fmt: skip
    assert both
    busy = wait_for(lambda: next((n for n in names.values() if _sandbox_on(n)), None), 300, "a node mid-job")
    swarm.lose_node(busy)
    survivor = next(n for n in names.values() if n is not busy)

    output, _ = recorder.communicate(timeout=900)
    assert recorder.returncode == 0, output
    resent = [line for line in output.splitlines() if "stopped while grading" in line]
    assert resent and all(f"worker {busy.name}-worker-" in line for line in resent), output  # it was mid-job
    assert_graded_as_here(swarm_class["course"], swarm_class["submitted"], out, STUDENTS)

    # The lost node's worker is started again on the node that is left.
    moved = wait_for(lambda: len(_running_tasks(service)) == 2 and _running_tasks(service), 180,
                     "two workers running again")  # fmt: skip
    assert {t["NodeID"] for t in moved} == {survivor.node_id}


def test_the_queue_refuses_plain_text_and_a_client_that_does_not_check_the_certificate(swarm_class):
    """Redis's port speaks TLS only; a client must check the certificate against the class's CA."""
    import redis

    url = swarm_class["broker"]
    with pytest.raises((redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
        redis.Redis.from_url(url.replace("rediss://", "redis://"), socket_timeout=5).ping()
    with pytest.raises(redis.exceptions.ConnectionError, match="certificate verify failed"):
        redis.Redis.from_url(url, ssl_cert_reqs="required", ssl_ca_certs=ssl.get_default_verify_paths().cafile,
                             ssl_check_hostname=False, socket_timeout=5).ping()  # fmt: skip
    assert redis.Redis.from_url(url, ssl_cert_reqs="required", ssl_ca_certs=swarm_class["ca"],
                                ssl_check_hostname=False).ping()  # fmt: skip
    # This kernel cannot encrypt an overlay (no IPsec ESP): the class says so, and TLS stands in.
    unencrypted = [line for line in swarm_class["said"] if "not encrypted" in line]
    assert bool(unencrypted) == (not swarm.esp_available()), swarm_class["said"]


def test_scaling_workers_without_a_swarm_class_says_what_to_do(swarm_class, tmp_path):
    done = _cli("workers", "scale", "3", "--class", str(tmp_path / "other"), root=swarm_class["course"].root)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr == ("jaxcourse: error: no workers' service jaxcourse-other-workers: start the class with "
                           "`jaxcourse hub up --swarm` first\n")  # fmt: skip


def test_the_broker_password_reaches_workers_as_a_secret_never_in_the_service_spec(swarm_class):
    service = swarm_class["service"]
    service.reload()
    password = swarm_class["deployment"].classdir.secret("redis_password")
    key = swarm_class["deployment"].classdir.secret("queue_key")
    spec = json.dumps(service.attrs["Spec"])
    assert password not in spec and key not in spec
    targets = {s["File"]["Name"] for s in service.attrs["Spec"]["TaskTemplate"]["ContainerSpec"]["Secrets"]}
    assert targets == set(swarm_queue.SECRETS)
