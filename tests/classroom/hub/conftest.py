"""One class for the hub tests: `jaxcourse hub up` on a private copy of the course, with two
students, an attacker and an instructor, and 01_collectives released to it; `hub down` after.

The hub, Redis and the students' images are built once (the students' image is the session's
``cpu_image``); every test here shares the running class, as a real class shares its hub."""

from __future__ import annotations

import pytest

from autograder.core.course import Course
from classroom.hub.deploy import LOCAL_DOMAIN

from ...helpers.classroom import TEST_LIMITS, class_course
from ...helpers.course import REPO
from ...helpers.engine import unavailable
from ...helpers.hub import (
    CHROMIUM_FLAGS,
    CLASS_RULES,
    ROSTER,
    SHOTS,
    User,
    jaxcourse,
    resolve_localhost_subdomains,
    save_logs,
)
from ...helpers.images import chromium_or_skip
from ...helpers.net import free_port


@pytest.fixture(scope="package")  # down once this folder's tests are done, not kept through the rest of the suite
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
        resolve_localhost_subdomains()  # the class is at jaxcourse.localhost, each server at <user>.jaxcourse.localhost
        users = {name: User(f"http://{LOCAL_DOMAIN}:{port}", name, f"{name}-pw-123") for name in ROSTER}
        yield {
            "course": checkout,
            "classdir": classdir,
            "port": port,
            "users": users,
            "up": up,
            "name": f"jaxcourse-{classdir.name}",
        }
    finally:
        save_logs(client, f"jaxcourse-{classdir.name}", REPO / "build" / "test-artifacts" / "hub-logs")
        jaxcourse(checkout.root, "hub", "down", "--class", str(classdir))


@pytest.fixture
def page():
    """A page of Debian's chromium, driven by Playwright; screenshots go under SHOTS."""
    chromium_or_skip()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        unavailable("Playwright", str(err))
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(120_000)
        yield context.new_page()
        browser.close()
