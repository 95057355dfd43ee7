"""Strangers' code against the docker sandbox. Every file under cases/ is one student's notebook
(the reference, with some functions replaced and a cell added); the whole class, the reference
student included, is graded in one run. Each must end with its score and a clear status, the
grader must survive, and everyone else must be graded as if the attackers were not there.

A case file says ``EXPECTED`` (test -> score; all else full marks) or ``STATUS`` (or a tuple of
statuses where more than one limit may stop it first), and ``MESSAGE``, a pattern the report's
message must match. ``{port}``, ``{host_ip}``, ``{course}`` and
``{notebook}`` in its cell are filled in with what an attacker would aim at on this machine.
"""

from __future__ import annotations

import hashlib
import re
import socket
import threading
from pathlib import Path

import pytest

from autograder.grading.classroom import grade_class
from autograder.grading.docker_sandbox import LABEL

from ..conftest import ASSIGNMENT, NOTEBOOK, WrongSubmission, _literal, copy_course, solved_notebook, write_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CASES = Path(__file__).parent / "cases"
# Short limits: the endless cases cost 45 s, the hanging collective 8 s per case.
LIMITS = "[sandbox]\ntimeout = 45\ntest_timeout = 8\n"


class Case(WrongSubmission):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        text = path.read_text()
        self.message: str = _literal(text, "MESSAGE", "")
        self.message_of: dict[str, str] = _literal(text, "MESSAGE_OF", {})


def cases() -> list[Case]:
    return [Case(p) for p in sorted(CASES.glob("*.py"))]


class Listener:
    """A TCP server on every address of this machine that remembers who connected."""

    def __init__(self) -> None:
        self.server = socket.create_server(("0.0.0.0", 0))
        self.port = self.server.getsockname()[1]
        self.connections: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, peer = self.server.accept()
            except OSError:
                return
            self.connections.append(peer[0])
            conn.close()


def _host_ip() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # no packet is sent; this picks the outward address
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def _fill(cell: str | None, values: dict[str, str]) -> str | None:
    for key, value in values.items():
        cell = cell.replace("{" + key + "}", value) if cell else cell
    return cell


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def listener():
    server = Listener()
    yield server
    server.server.close()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, cpu_image, listener):
    """One class: the reference student and every case, graded by one `grade_class` run."""
    root = tmp_path_factory.mktemp("adversarial")
    course = copy_course(root)
    (root / "jaxcourse.toml").write_text(LIMITS)
    submitted = course.nbgrader_root / "submitted"
    write_submission(submitted, "reference", solved_notebook(course))
    notebooks = {}
    for case in cases():
        notebook = submitted / case.name / ASSIGNMENT / NOTEBOOK
        values = {"port": str(listener.port), "host_ip": _host_ip(), "course": str(root), "notebook": str(notebook)}
        write_submission(submitted, case.name, solved_notebook(course, case.functions, _fill(case.extra_cell, values)))
        notebooks[case.name] = (notebook, _digest(notebook))
    run = grade_class(ASSIGNMENT, course, jobs=2, progress=False, sandbox="docker", image=cpu_image, say=print)
    return {r.student: r for r in run.reports}, notebooks


@pytest.fixture(scope="module")
def full_marks(graded) -> dict[str, float]:
    reports, _ = graded
    return {t.name: t.max_score for t in reports["reference"].tests}


def test_the_reference_student_is_graded_as_usual(graded):
    reports, _ = graded
    reference = reports["reference"]
    assert reference.status == "graded", reference.message
    assert reference.score == reference.max_score == 50


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_each_attack_gets_its_status_and_score(case: Case, graded, full_marks):
    reports, _ = graded
    report = reports[case.name]
    assert report.status in (case.status if isinstance(case.status, tuple) else (case.status,)), (
        f"{report.status}: {report.message}"
    )
    assert re.search(case.message, report.message), report.message
    if report.status != "graded":
        assert report.score == 0
        return
    assert {t.name: t.score for t in report.tests} == {**full_marks, **case.expected}, report.message
    messages = {t.name: t.message for t in report.tests}
    for test, pattern in case.message_of.items():
        assert re.search(pattern, messages[test]), messages[test]


def test_nothing_reached_the_network(graded, listener):
    assert listener.connections == []


def test_submissions_are_unchanged_on_disk(graded):
    _, notebooks = graded
    assert {name: _digest(path) for name, (path, _) in notebooks.items()} == {
        name: digest for name, (_, digest) in notebooks.items()
    }


def test_no_sandbox_container_outlives_the_run(graded, client):
    assert client.containers.list(all=True, filters={"label": LABEL}) == []
