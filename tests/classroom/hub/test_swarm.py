"""A class across a Docker Swarm: this engine as the manager and two nodes, each a container
running its own engine (``tests/helpers/swarm.py``), built once for this module.

- ``hub up --swarm``: students' servers land on the nodes, each on an overlay network of its own
  with the hub's container; each student submits and gets feedback, graded by workers on the
  nodes; a server reaches the hub, the proxy and the exchange, and nothing else across nodes; a
  node lost restarts its students' servers on the other node with their work intact; the
  single-host class's attacks (the exchange, her folder, her token, her quota) fail here too;
  ``hub up`` again leaves what did not change running.
- The queue alone: Redis and the recorder services on the manager, Redis speaking TLS, two
  workers on two nodes; one node lost in the middle of a job, and the class still graded, every
  student once, each grade equal to the local grader's; a changed setting updates the workers
  alone, in place.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import ssl
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.core.course import Course
from classroom import environment, swarm
from classroom.hub import deploy, homes, registry, server_tls, swarm_queue, swarm_tasks, teardown
from classroom.hub.images import build_redis

from ...helpers import attacks
from ...helpers.classroom import (
    SLOW_CELL,
    TEST_LIMITS,
    assert_graded_as_here,
    class_course,
    container_ip,
    new_class,
    running_a_job,
    wait_for,
)
from ...helpers.course import ASSIGNMENT, REPO, solved_notebook, total, write_submission
from ...helpers.hub import (
    CLASS_RULES,
    User,
    jaxcourse,
    put_notebook,
    resolve_localhost_subdomains,
    save_logs,
    submitted,
)
from ...helpers.net import free_port
from ...helpers.network import PROBES, Listener
from ...helpers.said import said
from ...helpers.submissions import wrong_submission
from ...helpers.swarm import local_swarm, restore

pytestmark = [pytest.mark.docker, pytest.mark.slow]

KINDS = [None, "ring_wrong_direction", None, "raises_at_import", None]
STUDENTS = {f"n{i:02d}": KINDS[i % len(KINDS)] for i in range(10)}
WRONG = wrong_submission(ASSIGNMENT, "ring_wrong_direction")
RESERVED = "300m"  # each server's memory reservation on its node ([hub] memory_reserved)
LARGEST_SANDBOX = '[assignments.03_multiprocess_training.sandbox]\nmemory = "3g"\n'  # the queue class's


@pytest.fixture(scope="module")
def swarm_nodes(client, cpu_image, tmp_path_factory):
    """The swarm, its two nodes labelled for students' servers and for grading: the course copies
    the tests make (under pytest's temporary root) are on every node at the same path."""
    with local_swarm(client, tmp_path_factory.getbasetemp()) as formed:
        for node in formed.nodes:
            labels = {homes.LAB_LABEL: "yes", swarm_queue.GRADE_LABEL: "yes"}
            client.nodes.get(node.node_id).update({"Role": "worker", "Availability": "active", "Labels": labels})
        yield formed


@pytest.fixture(scope="module")
def swarm_hub(tmp_path_factory, course, swarm_nodes):
    """`hub up --swarm` with two students and an instructor; the homes mounted on both nodes as
    the command says; two workers; 01_collectives released."""
    checkout = class_course(Course(course.root), TEST_LIMITS + CLASS_RULES + f'memory_reserved = "{RESERVED}"\n')
    base = tmp_path_factory.mktemp("swarmhub")
    classdir, roster = base / "swarm", base / "roster.csv"
    roster.write_text(
        "username,role,password\nalice,student,alice-pw-1\nbob,student,bob-pw-1\nmallory,student,mallory-pw-1\n"
        "teach,instructor,t-pw-1\n"
    )
    port, client = free_port(), swarm_nodes.client
    name = f"jaxcourse-{classdir.name}"
    try:
        up = jaxcourse(
            checkout.root,
            "hub",
            "up",
            "--swarm",
            "--class",
            str(classdir),
            "--roster",
            str(roster),
            "--port",
            str(port),
        )
        commands = [shlex.split(line.split("run as root: ")[1]) for line in up.splitlines() if "run as root: " in line]
        trust = next(c for c in commands if "/etc/docker/certs.d/" in c[-1])
        mount = next(c for c in commands if "sshfs" in c[-1])
        for node in swarm_nodes.nodes:
            node.run(*mount)
            node.run(*trust)
        jaxcourse(checkout.root, "workers", "scale", "2", "--class", str(classdir))
        workers = client.services.get(f"{name}-workers")  # each node pulls the image from the class's registry
        wait_for(lambda: len(_running_tasks(workers)) == 2, 300, "two workers running from the class's registry")
        jaxcourse(checkout.root, "release", ASSIGNMENT, "--class", str(classdir))
        resolve_localhost_subdomains()
        url = f"http://{deploy.LOCAL_DOMAIN}:{port}"
        users = {n: User(url, n, f"{n}-pw-1") for n in ("alice", "bob", "mallory")}
        yield {
            "course": checkout,
            "classdir": classdir,
            "name": name,
            "users": users,
            "up": up,
            "trust": trust,
            "port": port,
        }
    finally:
        save_logs(swarm_nodes.client, name, REPO / "build" / "test-artifacts" / "swarm-hub-logs")
        jaxcourse(checkout.root, "hub", "down", "--class", str(classdir))
        assert not client.volumes.list(filters={"label": f"{deploy.LABEL}={name}"}), "the registry's store goes too"
        assert not client.secrets.list(filters={"label": f"{deploy.LABEL}={name}"}), "and every server's certificate"
        for node in swarm_nodes.nodes:
            node.container.reload()
            if node.container.status == "running":  # a node a later test lost has nothing mounted
                node.run("sh", "-c", f"umount -l {homes.mount_point(name)} || true")


def _tasks_of(client, service_name):
    """The running tasks of a service (a student's server). A lost node's task still reads
    running, as its node last said, until the manager has written it off."""
    for service in client.services.list(filters={"name": service_name}):
        if service.name == service_name:
            return [t for t in service.tasks() if t["Status"]["State"] == "running" and t["DesiredState"] == "running"]
    return []


def _moved(client, service_name, lost):
    """Every task of the service the manager wants running, once one runs on a node but ``lost``."""
    wanted = client.services.get(service_name).tasks(filters={"desired-state": "running"})
    moved = [t for t in wanted if t["NodeID"] != lost.node_id and t["Status"]["State"] == "running"]
    return wanted if moved else None


def _task_container(client, service_name):
    """The container of a service's task on this engine (the manager)."""
    (container,) = client.containers.list(filters={"label": f"com.docker.swarm.service.name={service_name}"})
    return container


def _task_of(client, service_name):
    """The running task of a service whose node is up, or None."""
    return next(iter(_tasks_of(client, service_name)), None)


def _answers(user, path):
    """The user's server answers ``path`` (through the proxy) with 200; an error is a no for now."""
    import requests

    try:
        return user.server("GET", path, timeout=10).status_code == 200
    except requests.RequestException:
        return False


def _node_of(swarm_nodes, task):
    return next(n for n in swarm_nodes.nodes if n.node_id == task["NodeID"])


def _in_server(swarm_nodes, task, code):
    """``code`` run in the task's container, on its node, as the student (uid 1000); one JSON line."""
    container = task["Status"]["ContainerStatus"]["ContainerID"]
    out = _node_of(swarm_nodes, task).docker("exec", "-u", "1000:100", container, "python", "-c", code)
    return json.loads(out.splitlines()[-1])


def test_students_servers_land_on_both_nodes_and_each_gets_feedback(swarm_hub, swarm_nodes, course):
    client, name = swarm_nodes.client, swarm_hub["name"]
    alice, bob = swarm_hub["users"]["alice"], swarm_hub["users"]["bob"]
    for user in (alice, bob):
        user.ready()
    tasks = {u.name: _task_of(client, f"{name}-lab-{u.name}") for u in (alice, bob)}
    assert {t["NodeID"] for t in tasks.values()} == {n.node_id for n in swarm_nodes.nodes}, "one server per node"
    resources = client.services.get(f"{name}-lab-alice").attrs["Spec"]["TaskTemplate"]["Resources"]
    assert resources["Reservations"]["MemoryBytes"] == 300 * 2**20, "placed by [hub] memory_reserved"
    assert resources["Limits"]["MemoryBytes"] == 2 * 2**30, "held to [hub] memory"

    for user, functions in ((alice, None), (bob, WRONG.functions)):
        user.action("fetch", ASSIGNMENT)
        put_notebook(user, solved_notebook(course, functions))
        user.action("submit", ASSIGNMENT)
    for user in (alice, bob):
        wait_for(
            lambda u=user: submitted(u.assignments(), ASSIGNMENT)[-1]["has_exchange_feedback"],
            600,
            f"{user.name}'s feedback",
        )
        user.action("fetch_feedback", ASSIGNMENT)
    pages = {}
    for user in (alice, bob):
        stamp = submitted(user.assignments(), ASSIGNMENT)[-1]["timestamp"]
        folder = swarm_hub["classdir"] / "home" / user.name / ASSIGNMENT / "feedback" / stamp
        pages[user.name] = (folder / f"{ASSIGNMENT}.html").read_text()  # fetched on a node, kept on the manager
    full = total(ASSIGNMENT)
    assert f"Score: {full:g} / {full:g}" in pages["alice"]
    assert all(reason in pages["bob"] for reason in WRONG.reasons.values())
    assert f"Score: {full:g} / {full:g}" not in pages["bob"]


def test_her_server_reaches_the_hub_and_nothing_else_across_nodes(swarm_hub, swarm_nodes):
    """From alice's server on one node: the hub's API, its proxy and the exchange answer; bob's
    server on the other node, Redis, the work folders' server and a listener on the manager do
    not. The hub's API and the exchange cross hosts by TLS only, and take only a caller whose
    certificate the hub issued."""
    client, name = swarm_nodes.client, swarm_hub["name"]
    alice, bob = (_task_of(client, f"{name}-lab-{u}") for u in ("alice", "bob"))
    assert alice["NodeID"] != bob["NodeID"]
    bob_ip = next(
        a["Addresses"][0].split("/")[0]
        for a in bob["NetworksAttachments"]
        if a["Network"]["Spec"]["Name"] == f"{name}-lab-bob-net"
    )
    redis_ip = container_ip(_task_container(client, f"{name}-redis"), f"{name}-queue")
    manager = client.info()["Swarm"]["NodeAddr"]
    listener = Listener()
    targets = {
        "bob": [bob_ip, 8888],
        "redis": [redis_ip, 6379],
        "redis by name": [f"{name}-redis", 6379],
        "homes": [manager, homes.PORT],
        "manager": [manager, listener.port],
    }
    seen = _in_server(
        swarm_nodes,
        alice,
        PROBES
        + f"""
exchange = os.environ["JAXCOURSE_EXCHANGE_URL"].rstrip("/") + "/api/assignments"
print(json.dumps({{"reached": {{k: connect(*v) for k, v in {targets!r}.items()}}, "exchange url": exchange,
                  "api": http("https://{name}-hub:8081/hub/api/"), "proxy": http("http://{name}-hub:8000/hub/api/"),
                  "exchange": http(exchange),
                  "refused": {{"api in the clear": http("http://{name}-hub:8081/hub/api/"),
                              "api without her certificate": http("https://{name}-hub:8081/hub/api/", cert=False),
                              "exchange without her certificate": http(exchange, cert=False),
                              "exchange in the clear": http("http://{name}-hub:10101/services/exchange/api/assignments")}}}}))
""",
    )
    assert (seen["api"], seen["proxy"], seen["exchange"]) == (200, 200, 200), seen
    assert seen["exchange url"].startswith(f"https://{name}-hub:"), seen
    assert all(isinstance(why, str) for why in seen["refused"].values()), seen  # no HTTP status: no answer at all
    assert all(result != "connected" for result in seen["reached"].values()), seen
    assert listener.connections == []
    # Her network is encrypted where the kernel can carry it (IPsec ESP); where not, `hub up` said so.
    options = client.networks.get(f"{name}-lab-alice-net").attrs["Options"] or {}
    esp = swarm.esp_available()
    assert ("encrypted" in options) == esp
    assert ("server networks are not encrypted" in swarm_hub["up"]) == (not esp)


def test_her_server_speaks_tls_only_with_a_key_that_travels_as_a_swarm_secret(swarm_hub, swarm_nodes):
    """The proxy and the hub reach her server across hosts by TLS: it refuses plain HTTP and
    answers the hub's certificate under its service's name. Her key, certificate and CAs are
    Swarm secrets, readable by her server's user only, never in her service's spec."""
    client, name = swarm_nodes.client, swarm_hub["name"]
    service = client.services.get(f"{name}-lab-alice").attrs
    spec = service["Spec"]["TaskTemplate"]["ContainerSpec"]
    files = {ref["File"]["Name"]: ref["File"] for ref in spec["Secrets"]}
    assert set(files) == {"keyfile", "certfile", "cafile"}
    assert all((f["UID"], f["GID"], f["Mode"]) == ("1000", "100", 0o400) for f in files.values()), files
    env = dict(line.split("=", 1) for line in spec["Env"])
    assert env["JUPYTERHUB_SSL_KEYFILE"] == f"{server_tls.MOUNT}/keyfile", env
    assert "PRIVATE KEY" not in json.dumps(service)
    store = swarm_hub["classdir"] / "hub" / "internal-ssl"  # the hub's certificates, on the manager only
    probe = f"""
import json, ssl, urllib.request
url = "{{}}://{name}-lab-alice:8888/user/alice/api"
tls = ssl.create_default_context(cafile="{store}/hub-ca_trust.crt")
tls.load_cert_chain("{store}/hub-internal/hub-internal.crt", "{store}/hub-internal/hub-internal.key")
def ask(proto, context=None):
    try:
        return urllib.request.urlopen(url.format(proto), timeout=20, context=context).status
    except OSError as err:
        return type(err).__name__
print(json.dumps({{"plain": ask("http"), "tls": ask("https", tls)}}))
"""
    code, out = client.containers.get(f"{name}-hub").exec_run(["python3", "-c", probe])
    seen = json.loads(out.decode().splitlines()[-1])
    assert code == 0 and seen["tls"] == 200 and isinstance(seen["plain"], str), (code, out)


def test_a_lost_node_restarts_its_students_elsewhere_with_their_work(swarm_hub, swarm_nodes):
    client, name = swarm_nodes.client, swarm_hub["name"]
    alice = swarm_hub["users"]["alice"]
    written = alice.server("PUT", "api/contents/notes.txt", json={"type": "file", "format": "text", "content": "ring"})
    assert written.status_code in (200, 201), written.text
    lost = _node_of(swarm_nodes, _task_of(client, f"{name}-lab-alice"))
    swarm.lose_node(lost)
    try:
        wanted = wait_for(lambda: _moved(client, f"{name}-lab-alice", lost), 300, "alice's server on the other node")
        elsewhere = [t for t in wanted if t["NodeID"] != lost.node_id]
        assert len(elsewhere) == 1
        # Her lost task may still be wanted running: the hub's spawner takes the replacement for her
        # server, and asking to start it (which polls it) is told it runs already, not a 500.
        assert swarm_tasks.current_task(wanted)["ID"] == elsewhere[0]["ID"], wanted
        again = alice.api("POST", "/hub/api/users/alice/server")
        assert again.status_code == 400 and "already running" in again.text, (again.status_code, again.text, wanted)
        wait_for(lambda: _answers(alice, "api/contents/notes.txt"), 180, "alice's server answering again")
        back = alice.server("GET", "api/contents/notes.txt").json()
        assert back["content"] == "ring"
        nb = alice.server("GET", f"api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb").json()
        assert nb["type"] == "notebook" and nb["content"]["cells"], "her assignment, as she left it"
        assert (swarm_hub["classdir"] / "home" / "alice" / "notes.txt").read_text() == "ring"
        hub_log = client.containers.get(f"{name}-hub").logs().decode()
        assert "more than one running notebook task" not in hub_log
    finally:
        restore(client, lost)


def test_the_nodes_pull_the_course_image_from_a_registry_no_one_can_push_to(swarm_hub, swarm_nodes):
    """Servers and workers name the image by digest in the class's registry on the manager; the
    registry refuses a push from a node, and an engine that does not trust the class's CA pulls
    nothing from it; the writable registry the manager pushed through is gone."""
    client, name = swarm_nodes.client, swarm_hub["name"]
    address = client.info()["Swarm"]["NodeAddr"]
    workers = client.services.get(f"{name}-workers").attrs["Spec"]["TaskTemplate"]["ContainerSpec"]
    alice = client.services.get(f"{name}-lab-alice").attrs["Spec"]["TaskTemplate"]["ContainerSpec"]
    reference = workers["Image"]
    assert re.fullmatch(rf"{re.escape(address)}:{registry.PORT}/jaxcourse:cpu@sha256:[0-9a-f]{{64}}", reference)
    assert alice["Image"] == reference and f"--image {reference}" in workers["Command"][-1]
    node = swarm_nodes.nodes[0]
    assert node.docker("image", "inspect", "--format", "{{.Id}}", reference) == client.images.get("jaxcourse:cpu").id

    forged = f"{address}:{registry.PORT}/jaxcourse:cpu"
    node.docker("tag", reference, forged)
    with pytest.raises(swarm.SwarmError, match="405 response"):  # the registry the nodes read is read-only
        node.docker("push", forged, timeout=120)
    pulled = subprocess.run(["docker", "pull", reference], capture_output=True, text=True, timeout=120)
    assert pulled.returncode != 0 and "certificate signed by unknown authority" in pulled.stderr, (
        pulled
    )  # no trust here
    assert not client.containers.list(all=True, filters={"name": f"{name}-registry-push"})


def test_hub_up_again_leaves_the_class_running_and_drops_a_stale_secret(swarm_hub, swarm_nodes):
    """A second ``hub up --swarm`` (after an upgrade, or to be sure): what runs is left running,
    the workers keep the scale ``workers scale`` gave them and their tasks, and a secret of the
    class that no service names any more (an old password's) is removed, while those of the
    students' running servers stay."""
    client, name = swarm_nodes.client, swarm_hub["name"]
    services = [client.services.get(f"{name}-{s}") for s in ("workers", "redis", "grading")]
    tasks = {t["ID"] for service in services for t in _running_tasks(service)}
    kept = {c: client.containers.get(f"{name}-{c}").id for c in ("hub", "registry", "homes")}
    stale = client.secrets.create(
        name=swarm_queue.secret_name(name, "broker", "an old password"), data=b"old", labels={deploy.LABEL: name}
    )
    again = jaxcourse(
        swarm_hub["course"].root,
        "hub",
        "up",
        "--swarm",
        "--class",
        str(swarm_hub["classdir"]),
        "--port",
        str(swarm_hub["port"]),
    )
    assert {c: client.containers.get(f"{name}-{c}").id for c in kept} == kept, again
    assert f"{name}-workers: 2 workers" in again
    workers = services[0]
    workers.reload()
    assert workers.attrs["Spec"]["Mode"]["Replicated"]["Replicas"] == 2
    assert {t["ID"] for service in services for t in _running_tasks(service)} == tasks, "no task restarted"
    secrets = client.secrets.list(filters={"label": f"{deploy.LABEL}={name}"})
    named = {
        ref["SecretName"]
        for service in client.services.list(filters={"label": f"{deploy.LABEL}={name}"})
        for ref in service.attrs["Spec"]["TaskTemplate"]["ContainerSpec"]["Secrets"]
    }
    assert stale.name not in {s.name for s in secrets} and {s.name for s in secrets} == named
    whose = {s.attrs["Spec"]["Labels"].get(server_tls.SERVER_LABEL) for s in secrets}
    assert {f"{name}-lab-alice", f"{name}-lab-bob"} <= whose, "running servers keep their certificates"
    image = workers.attrs["Spec"]["TaskTemplate"]["ContainerSpec"]["Image"]
    assert (swarm_hub["classdir"] / "hub" / "node-image").read_text() == image + "\n"  # what new servers run


@pytest.fixture(scope="module")
def mallory(swarm_hub):
    """The attacker, a student whose server runs on a node."""
    user = swarm_hub["users"]["mallory"].ready()
    user.action("fetch", ASSIGNMENT)
    return user


def test_the_single_host_class_s_attacks_on_the_exchange_fail_on_the_swarm_too(swarm_hub, mallory):
    """The exchange runs in the hub on the manager; her token comes from a server on a node."""
    attacks.the_exchange_shows_her_only_her_own(mallory)
    attacks.without_a_real_token_the_exchange_refuses(mallory)
    attacks.a_submission_is_filed_under_her_name(swarm_hub["classdir"], mallory)
    attacks.released_files_and_feedback_cannot_be_written(mallory)


def test_her_server_on_a_node_holds_only_her_folder_and_her_token_gets_only_herself(swarm_hub, swarm_nodes, mallory):
    """Her node mounts every student's folder; her server, only hers: nothing of a classmate,
    the gradebook, the solutions or the roster is in it, and her token (which any code she runs
    holds) reads and makes nothing but herself."""
    client, name = swarm_nodes.client, swarm_hub["name"]
    task = _task_of(client, f"{name}-lab-mallory")
    container = task["Status"]["ContainerStatus"]["ContainerID"]
    mounts = json.loads(_node_of(swarm_nodes, task).docker("inspect", "--format", "{{json .Mounts}}", container))
    binds = {m["Source"]: m["Destination"] for m in mounts if m["Type"] == "bind"}
    assert binds == {f"{homes.mount_point(name)}/mallory": "/home/jovyan/work"}
    assert _in_server(swarm_nodes, task, attacks.FILES_WALK) == {"hits": []}
    assert _in_server(swarm_nodes, task, attacks.TOKEN_PROBE) == {"users": 403, "tokens": 403, "bob": 404}


# Run in her server: raw uploads to the exchange's TLS port, as the single-host attacks send them
# to the proxy: a gigabyte declared, a body of no declared size, a third upload trickling in.
UPLOADS = (
    PROBES
    + f"""
import socket, time, urllib.parse
url = urllib.parse.urlsplit(os.environ["JAXCOURSE_EXCHANGE_URL"])
head = ("POST " + url.path + "api/assignments/{ASSIGNMENT}/submissions HTTP/1.1\\r\\nHost: " + url.hostname
        + "\\r\\nAuthorization: token " + os.environ["JUPYTERHUB_API_TOKEN"] + "\\r\\nContent-Type: application/json\\r\\n")
def opened():
    return tls(True).wrap_socket(socket.create_connection((url.hostname, url.port), timeout=30),
                                 server_hostname=url.hostname)
def answer(sock):
    return sock.recv(65536).decode(errors="replace")
seen = {{}}
with opened() as sock:
    sock.sendall((head + "Content-Length: %d\\r\\n\\r\\n" % (1 << 30)).encode() + b'{{"files": {{"big.ipynb": "' + b"A" * (1 << 20))
    seen["a gigabyte"] = answer(sock)
with opened() as sock:
    sock.sendall((head + "Transfer-Encoding: chunked\\r\\n\\r\\n").encode())
    for _ in range(4):
        sock.sendall(b"100000\\r\\n" + b"A" * (1 << 20) + b"\\r\\n")
    seen["no declared size"] = answer(sock)
def trickle():
    sock = opened()
    sock.sendall((head + "Content-Length: 1000000\\r\\n\\r\\n").encode() + b'{{"files": {{"a.ipynb": "')
    return sock
held = [trickle(), trickle()]
time.sleep(3)  # the exchange has read both heads, on a loaded machine too
with trickle() as sock:
    seen["a third at once"] = answer(sock)
print(json.dumps({{k: v.splitlines()[0] + " " + v.rpartition("\\n")[2] for k, v in seen.items()}}))
"""
)


def test_the_upload_limits_hold_on_the_exchange_s_tls_port(swarm_hub, swarm_nodes, mallory):
    """Her server reaches the exchange by TLS at a port of its own; the limits the single-host
    class's attacks meet through the proxy meet her there too."""
    task = _task_of(swarm_nodes.client, f"{swarm_hub['name']}-lab-mallory")
    seen = _in_server(swarm_nodes, task, UPLOADS)
    assert " 413 " in seen["a gigabyte"] and "a submission may hold 2 MB; this one is 1024 MB" in seen["a gigabyte"]
    assert " 413 " in seen["no declared size"] and "this one is larger" in seen["no declared size"], seen
    assert " 429 " in seen["a third at once"] and "too many uploads at once" in seen["a third at once"], seen
    assert not list((swarm_hub["classdir"] / "exchange" / "inbound" / "mallory").rglob("big.ipynb"))


def test_filling_her_work_folder_from_a_node_stops_her_server_until_she_clears_it(swarm_hub, swarm_nodes, mallory):
    """Her writes on a node land in the class directory on the manager (sshfs), where the hub's
    quota service sees them and stops her server, on whichever node it runs."""
    service = f"{swarm_hub['name']}-lab-mallory"
    task = _task_of(swarm_nodes.client, service)
    attacks.over_quota_stops_her_server(
        swarm_hub["classdir"], mallory, lambda code: _in_server(swarm_nodes, task, code)
    )
    left = swarm_nodes.client.secrets.list(filters={"label": f"{server_tls.SERVER_LABEL}={service}"})
    assert left == [], "her certificate goes with her server"


@pytest.fixture(scope="module")
def swarm_class(tmp_path_factory, course, swarm_nodes, cpu_image):
    """The class's queue on the swarm: its overlay network, Redis with TLS on the manager, two
    workers on the nodes labelled for grading; and the submissions."""
    client = swarm_nodes.client
    build_redis(client, REPO)  # seconds from the layer cache
    checkout = class_course(Course(course.root), TEST_LIMITS + LARGEST_SANDBOX)
    deployment = new_class(tmp_path_factory.mktemp("swarmclass"), checkout)
    submitted = tmp_path_factory.mktemp("swarm-submitted")
    for number, (student, wrong) in enumerate(STUDENTS.items()):
        sub = wrong_submission(ASSIGNMENT, wrong) if wrong else None
        slow = SLOW_CELL if sub is None and number >= len(STUDENTS) // 2 else None  # the last to be graded
        extra = sub.extra_cell if sub else slow
        write_submission(submitted, student, solved_notebook(course, sub.functions if sub else None, extra))
    with ThreadPoolExecutor(len(swarm_nodes.nodes)) as pool:  # this class's images reach the nodes without a registry
        list(pool.map(lambda node: swarm.load_image(node, cpu_image), swarm_nodes.nodes))
    with said() as lines:
        swarm_queue.start(client, deployment, deploy.ClassImages(cpu_image, cpu_image))  # its queue
    try:
        redis = _task_container(client, f"{deployment.name}-redis")
        client.networks.get(swarm_nodes.network).connect(redis)  # the recorder here reaches it on the bridge
        scaled = _cli("workers", "scale", "2", "--class", str(deployment.classdir.root), root=checkout.root)
        assert scaled.returncode == 0 and scaled.stdout == f"{deployment.name}-workers: 2 workers\n", scaled
        host_broker = swarm_queue.broker(deployment).replace(
            f"@{deployment.name}-redis:", f"@{container_ip(redis, swarm_nodes.network)}:"
        )
        yield {
            "deployment": deployment,
            "course": checkout,
            "submitted": submitted,
            "said": lines,
            "service": client.services.get(f"{deployment.name}-workers"),
            "redis": redis,
            "broker": host_broker,
            "ca": str(swarm_queue.tls(deployment).ca),
        }
    finally:
        teardown.down(deployment)


def _cli(*argv, root):
    env = {**os.environ, environment.ROOT: str(root)}
    return subprocess.run([sys.executable, "-m", "jaxcourse", *argv], env=env, capture_output=True, text=True)


def _running_tasks(service):
    service.reload()
    return [t for t in service.tasks() if t["Status"]["State"] == "running" and t["DesiredState"] == "running"]


def _graders(swarm_class):
    """The worker host names in the outcomes stored so far, by job."""
    import redis

    url = swarm_class["broker"]
    store = redis.Redis.from_url(
        url, ssl_cert_reqs="required", ssl_ca_certs=swarm_class["ca"], ssl_check_hostname=False
    )
    found = {}
    for key in store.scan_iter("celery-task-meta-*"):
        meta = json.loads(store.get(key))
        if meta.get("status") == "SUCCESS":
            found[key.decode()] = meta["result"]["worker"]
    return found


def _sandbox_on(node):
    """Whether a sandbox on ``node`` is running a submission now: the owners of its processes, read
    from inside it (a node has no ``ps`` for ``docker top``), as root in a lane, so that only a
    job's are not root's; a fresh container runs only for a job."""
    try:
        boxes = node.docker("ps", "-q", "--filter", "label=jaxcourse.sandbox", timeout=10).split()
        owners = [
            node.docker("exec", box, "sh", "-c", "stat -c %u /proc/[0-9]*; true", timeout=10).split() for box in boxes
        ]
    except (swarm.SwarmError, subprocess.TimeoutExpired):
        return False
    return any(running_a_job(uids) for uids in owners)


def test_workers_on_two_nodes_grade_over_tls_and_a_lost_node_loses_nothing(swarm_class, swarm_nodes, tmp_path):
    service = swarm_class["service"]
    tasks = wait_for(lambda: len(_running_tasks(service)) == 2 and _running_tasks(service), 180, "two workers running")
    assert {t["NodeID"] for t in tasks} == {n.node_id for n in swarm_nodes.nodes}, "one worker per node"

    out = tmp_path / "graded"
    env = {
        **os.environ,
        environment.ROOT: str(swarm_class["course"].root),
        "PYTHONUNBUFFERED": "1",
        environment.QUEUE_KEY: swarm_class["deployment"].classdir.secret("queue_key"),
        environment.BROKER_CA: swarm_class["ca"],
    }
    argv = [
        sys.executable,
        "-m",
        "jaxcourse",
        "grade",
        ASSIGNMENT,
        "--broker",
        swarm_class["broker"],
        "--submissions",
        str(swarm_class["submitted"]),
        "--out",
        str(out),
        "--quiet",
    ]
    recorder = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    names = {n.name: n for n in swarm_nodes.nodes}
    both = wait_for(
        lambda: len({w.rpartition("-worker-")[0] for w in _graders(swarm_class).values()}) == 2,
        600,
        "an outcome from each node's worker",
    )
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
    on_survivor = wait_for(
        lambda: len([t for t in _running_tasks(service) if t["NodeID"] == survivor.node_id]) == 2,
        180,
        "both workers running on the node that is left",
    )
    assert on_survivor


def test_the_queue_refuses_plain_text_and_a_client_that_does_not_check_the_certificate(swarm_class):
    """Redis's port speaks TLS only; a client must check the certificate against the class's CA."""
    import redis

    url = swarm_class["broker"]
    with pytest.raises((redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
        redis.Redis.from_url(url.replace("rediss://", "redis://"), socket_timeout=5).ping()
    with pytest.raises(redis.exceptions.ConnectionError, match="certificate verify failed"):
        redis.Redis.from_url(
            url,
            ssl_cert_reqs="required",
            ssl_ca_certs=ssl.get_default_verify_paths().cafile,
            ssl_check_hostname=False,
            socket_timeout=5,
        ).ping()
    assert redis.Redis.from_url(
        url, ssl_cert_reqs="required", ssl_ca_certs=swarm_class["ca"], ssl_check_hostname=False
    ).ping()
    # This kernel cannot encrypt an overlay (no IPsec ESP): the class says so, and TLS stands in.
    unencrypted = [line for line in swarm_class["said"] if "not encrypted" in line]
    assert bool(unencrypted) == (not swarm.esp_available()), swarm_class["said"]


def test_scaling_workers_without_a_swarm_class_says_what_to_do(swarm_class, tmp_path):
    done = _cli("workers", "scale", "3", "--class", str(tmp_path / "other"), root=swarm_class["course"].root)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr == (
        "jaxcourse: error: no workers' service jaxcourse-other-workers: start the class with "
        "`jaxcourse hub up --swarm` first\n"
    )


def test_the_queue_s_secrets_reach_its_services_as_files_never_in_a_service_spec(swarm_class, swarm_nodes):
    """Redis, the recorder and the workers are Swarm services; Redis's password, the broker's
    URL and the key outcomes are signed with are in none of their specs. Redis and the recorder
    are pinned to the manager, which holds the class directory, by image ID (no registry asked)."""
    client, name = swarm_nodes.client, swarm_class["deployment"].name
    password = swarm_class["deployment"].classdir.secret("redis_password")
    key = swarm_class["deployment"].classdir.secret("queue_key")
    files = {"workers": set(swarm_queue.SECRETS), "grading": set(swarm_queue.SECRETS), "redis": {swarm_queue.PASSWORD}}
    manager = client.info()["Swarm"]["NodeID"]
    for short, expected in files.items():
        spec = client.services.get(f"{name}-{short}").attrs["Spec"]
        assert password not in json.dumps(spec) and key not in json.dumps(spec), short
        container = spec["TaskTemplate"]["ContainerSpec"]
        assert {s["File"]["Name"] for s in container["Secrets"]} == expected, short
        if short != "workers":
            assert spec["TaskTemplate"]["Placement"]["Constraints"] == [f"node.id=={manager}"], short
            assert container["Image"].startswith("sha256:"), short
    # The image's probe is JupyterLab's, which a worker does not run: Swarm would kill it as unhealthy.
    workers = client.services.get(f"{name}-workers").attrs["Spec"]["TaskTemplate"]["ContainerSpec"]
    assert workers["Healthcheck"]["Test"] == ["NONE"]


def test_a_worker_holds_its_node_to_the_largest_sandbox_it_may_start(swarm_class):
    """Automatic concurrency, so one sandbox at once at least, of 03's 3g (LARGEST_SANDBOX):
    Swarm places a worker only on a node whose reservations leave that much."""
    resources = swarm_class["service"].attrs["Spec"]["TaskTemplate"]["Resources"]
    assert resources["Reservations"]["MemoryBytes"] == 3 * 2**30


def test_up_again_after_a_change_updates_only_what_changed_at_its_scale(swarm_class, swarm_nodes, cpu_image, caplog):
    """A setting that changes the workers' spec: their service is updated in place, still at the
    scale `workers scale` gave it; Redis and the recorder, whose specs did not change, are left
    running (an update would restart them)."""
    deployment, service = swarm_class["deployment"], swarm_class["service"]
    redis = _task_container(swarm_nodes.client, f"{deployment.name}-redis").id
    settings = deployment.checkout.root / "jaxcourse.toml"
    settings.write_text(settings.read_text() + "[hub]\nworker_concurrency = 1\n")
    with caplog.at_level(logging.INFO, logger="classroom"):
        swarm_queue.start(swarm_nodes.client, deployment, deploy.ClassImages(cpu_image, cpu_image))
    for part in ("redis", "grading"):
        assert f"{deployment.name}-{part}: a service, already running" in caplog.messages, caplog.messages
    assert _task_container(swarm_nodes.client, f"{deployment.name}-redis").id == redis
    service.reload()
    assert "--concurrency 1" in service.attrs["Spec"]["TaskTemplate"]["ContainerSpec"]["Command"][-1]
    assert service.attrs["Spec"]["Mode"]["Replicated"]["Replicas"] == 2
