"""Faults in a running class: the hub restarts and students' servers keep running; the grading
service and Redis die mid-grade and come back with `jaxcourse hub up`; every submission is
graded, and recorded exactly once."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ...helpers.classroom import SLOW_CELL, sandboxes_mid_job, wait_for
from ...helpers.course import ASSIGNMENT, solved_notebook
from ...helpers.hub import jaxcourse, put_notebook, submitted

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_hub_restart_leaves_servers_running_and_reachable(hub, client):
    alice = hub["users"]["alice"].ready()
    server = client.containers.get(f"{hub['name']}-lab-alice")
    hub_container = client.containers.get(f"{hub['name']}-hub")
    hub_container.restart(timeout=10)
    from classroom.hub.deploy import wait_healthy

    wait_healthy(hub_container)
    server.reload()
    assert server.status == "running" and client.containers.get(f"{hub['name']}-lab-alice").id == server.id
    # The image's probe finds the server under the hub's prefix, every 30 s rather than every second.
    assert server.attrs["Config"]["Healthcheck"]["Interval"] == 30 * 10**9

    def health() -> str:
        server.reload()
        return server.attrs["State"]["Health"]["Status"]

    wait_for(lambda: health() == "healthy", 90, "alice's server to report healthy")
    status = wait_for(
        lambda: alice.server("GET", "api/status").status_code == 200, 120, "alice's server through the proxy"
    )
    assert status


def _journal(hub) -> Counter:
    """How many times each submission was recorded, from the grading service's journal."""
    path = hub["classdir"] / "graded" / "recorded.jsonl"
    lines = path.read_text().splitlines() if path.is_file() else []
    return Counter(json.loads(line)["submission"] for line in lines)


def test_grading_survives_a_dead_service_and_a_redis_restart(hub, client, course):
    bob = hub["users"]["bob"].ready()
    if not (hub["classdir"] / "home" / "bob" / ASSIGNMENT).is_dir():
        bob.action("fetch", ASSIGNMENT)
    before = len(submitted(bob.assignments(), ASSIGNMENT))
    put_notebook(bob, solved_notebook(course, extra_cell=SLOW_CELL))  # in its sandbox long enough to be seen
    bob.action("submit", ASSIGNMENT)
    # Mid-grade: a worker has started a sandbox for bob's submission.
    wait_for(lambda: sandboxes_mid_job(client), 120, "a sandbox grading bob")
    client.containers.get(f"{hub['name']}-grading").kill()
    client.containers.get(f"{hub['name']}-redis").restart(timeout=5)
    out = jaxcourse(hub["course"].root, "hub", "up", "--class", str(hub["classdir"]))
    assert f"{hub['name']}-grading: started" in out and f"{hub['name']}-hub: already running" in out
    subs = submitted(bob.assignments(), ASSIGNMENT)
    assert len(subs) == before + 1

    def bobs() -> list[str]:
        return [key for key in _journal(hub) if key.startswith(f"bob/{ASSIGNMENT}/")]

    wait_for(lambda: len(bobs()) >= len(subs), 600, "every one of bob's submissions recorded")
    assert len(bobs()) == len(subs)
    assert all(count == 1 for count in _journal(hub).values()), _journal(hub)  # each submission once
    assert all(s["has_exchange_feedback"] for s in submitted(bob.assignments(), ASSIGNMENT))


def test_a_students_work_survives_a_stopped_server_and_hub_down_and_up(hub, client, course):
    """Her folder outlives her server: stopped as the idle culler stops it, then the whole class
    taken down (in the middle of grading her submission) and brought up again."""
    alice, teach = hub["users"]["alice"].ready(), hub["users"]["teach"].ready()
    saved = alice.server("PUT", "api/contents/notes.txt", json={"type": "file", "format": "text", "content": "mine"})
    assert saved.status_code in (200, 201), saved.text

    def notes() -> str:
        alice.start_server()
        got = alice.server("GET", "api/contents/notes.txt")
        assert got.status_code == 200, got.text
        return got.json()["content"]

    stopped = teach.api("DELETE", "/hub/api/users/alice/server")  # what jupyterhub-idle-culler calls
    assert stopped.status_code in (202, 204), stopped.text
    wait_for(
        lambda: not client.containers.list(filters={"name": f"^{hub['name']}-lab-alice$"}),
        60,
        "alice's server container to go",
    )
    assert notes() == "mine"
    if not (hub["classdir"] / "home" / "alice" / ASSIGNMENT).is_dir():
        alice.action("fetch", ASSIGNMENT)
    put_notebook(alice, solved_notebook(course, extra_cell=SLOW_CELL))  # in its sandbox long enough to be seen
    alice.action("submit", ASSIGNMENT)  # the class goes down in the middle of grading it
    wait_for(lambda: sandboxes_mid_job(client), 120, "a sandbox grading alice")
    jaxcourse(hub["course"].root, "hub", "down", "--class", str(hub["classdir"]))
    assert not client.containers.list(all=True, filters={"name": f"^{hub['name']}-"})
    assert not client.containers.list(all=True, filters={"label": "jaxcourse.sandbox"})  # nor what they started
    jaxcourse(hub["course"].root, "hub", "up", "--class", str(hub["classdir"]), "--port", str(hub["port"]))
    assert notes() == "mine"  # and her token, kept in the class's hub database, still works
