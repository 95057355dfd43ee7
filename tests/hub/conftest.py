"""One class for the hub tests: `jaxcourse hub up` on a private copy of the course, with two
students, an attacker and an instructor, and 01_collectives released to it; `hub down` after.

The hub, Redis and the students' images are built once (the students' image is the session's
``cpu_image``); every test here shares the running class, as a real class shares its hub."""

from __future__ import annotations

import pytest

from autograder.core.course import Course

from ..helpers.classroom import TEST_LIMITS, class_course
from ..helpers.course import REPO
from ..helpers.hub import CLASS_RULES, ROSTER, User, free_port, jaxcourse, save_logs


@pytest.fixture(scope="session")
def hub(tmp_path_factory, course, client, cpu_image):
    checkout = class_course(Course(course.root), TEST_LIMITS + CLASS_RULES)
    base = tmp_path_factory.mktemp("hub")
    classdir, roster = base / "class", base / "roster.csv"
    roster.write_text("username,role,password\n" + "".join(f"{n},{r},{n}-pw-123\n" for n, r in ROSTER.items()))
    port = free_port()
    try:
        up = jaxcourse(
            checkout.root, "hub", "up", "--class", str(classdir), "--roster", str(roster), "--port", str(port)
        )
        jaxcourse(checkout.root, "release", "01_collectives", "--class", str(classdir))
        users = {name: User(f"http://127.0.0.1:{port}", name, f"{name}-pw-123") for name in ROSTER}
        yield {"course": checkout, "classdir": classdir, "port": port, "users": users, "up": up,
               "name": f"jaxcourse-{classdir.name}"}  # fmt: skip
    finally:
        save_logs(client, f"jaxcourse-{classdir.name}", REPO / "build" / "test-artifacts" / "hub-logs")
        jaxcourse(checkout.root, "hub", "down", "--class", str(classdir))
