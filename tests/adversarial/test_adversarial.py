"""Strangers' code against the docker sandbox. Every file under cases/ is one student's notebook
(the reference, with some functions replaced and a cell added); the whole class, the reference
student included, is graded in one run. Each must end with its score and a clear status, the
grader must survive, and everyone else must be graded as if the attackers were not there.

A case file says ``EXPECTED`` (test -> score; all else full marks) with ``MESSAGE_OF`` (test ->
a pattern its message must match, for every test it loses), or ``STATUS`` (or a tuple of statuses
where more than one limit may stop it first) with ``MESSAGE``, a pattern the report's message must
match (``tests/helpers/submissions.py``; ``tests/test_submission_files.py`` holds every case to
it). A graded attack's report has no message; one with full marks passes every test. Every report
is also its record in the grading snapshot, word for word. ``{port}``, ``{host_ip}``,
``{course}`` and ``{notebook}`` in its cell are filled in with what an attacker would aim at on
this machine.
"""

from __future__ import annotations

import hashlib
import re
import socket
from pathlib import Path

import pytest

from autograder.grading.record.batch import grade_class
from autograder.grading.sandbox.docker_sandbox import LABEL

from ..helpers import snapshot
from ..helpers.course import ASSIGNMENT, NOTEBOOK, copy_course, full_marks, solved_notebook, total, write_submission
from ..helpers.network import Listener
from ..helpers.submissions import WrongSubmission, adversarial_cases

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Short limits: the endless cases cost 45 s, the hanging collective 8 s per case.
LIMITS = "[sandbox]\ntimeout = 45\ntest_timeout = 8\n"
# Cases added after the snapshot was recorded, with why they have no record: each still meets
# every other assertion here.
NOT_IN_SNAPSHOT = {
    "imports_trusted_code": "added with the restructuring, to prove the sandbox lacks trusted/ and grading/",
    "poisons_compile_cache": "added with the class's compile cache (issue 17), to prove no container can write it",
    "leaks_hidden_cases": "added with the sealed first phase (issue 23), to prove no hidden case reaches a student",
    "replays_shipped_records": "added with the shipped records (issue 23), to prove they answer no graded case",
    "floods_results_with_files": "added with the watchdog's entry count (issue 24), to prove a million files stop",
}
# The hidden cases' meshes of 01_collectives (its visible ones are 8:i and 2x4:x,y): what no student
# may read in a report's visible words or in a feedback page.
HIDDEN_MESH = re.compile(r"4x2|'x': 4|\(1, 5\)|\(4, 2, 2\)")


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
    for case in adversarial_cases():
        notebook = submitted / case.name / ASSIGNMENT / NOTEBOOK
        values = {"port": str(listener.port), "host_ip": _host_ip(), "course": str(root), "notebook": str(notebook)}
        write_submission(submitted, case.name, solved_notebook(course, case.functions, _fill(case.extra_cell, values)))
        notebooks[case.name] = (notebook, _digest(notebook))
    run = grade_class(ASSIGNMENT, course, jobs=2, progress=False, sandbox="docker", image=cpu_image)
    return {r.student: r for r in run.reports}, notebooks, course.nbgrader_root / "graded" / ASSIGNMENT


def test_the_reference_student_is_graded_as_usual(graded):
    reports, *_ = graded
    reference = reports["reference"]
    snapshot.assert_matches(reference, "adversarial/reference")
    assert reference.status == "graded", reference.message
    assert reference.message == "" and all(t.status == "passed" for t in reference.tests)
    assert {t.name: t.score for t in reference.tests} == full_marks(ASSIGNMENT)
    assert reference.score == reference.max_score == total(ASSIGNMENT)


@pytest.mark.parametrize("case", adversarial_cases(), ids=lambda c: c.name)
def test_each_attack_gets_its_status_and_score(case: WrongSubmission, graded):
    reports, *_ = graded
    report = reports[case.name]
    if case.name in NOT_IN_SNAPSHOT:
        assert f"adversarial/{case.name}" not in snapshot.records(), f"{case.name} has a record now: compare it"
    else:
        snapshot.assert_matches(report, f"adversarial/{case.name}", case.statuses)
    assert report.status in case.statuses, f"{report.status}: {report.message}"
    if report.status != "graded":
        assert case.message and re.search(case.message, report.message), report.message
        assert report.score == 0
    else:
        assert report.message == "", report.message
        assert {t.name: t.score for t in report.tests} == {**full_marks(ASSIGNMENT), **case.expected}
        messages = {t.name: t.message for t in report.tests}
        assert set(case.expected) <= set(case.message_of), "MESSAGE_OF must say why each lost test fails"
        for test, pattern in case.message_of.items():
            assert re.search(pattern, messages[test]), (test, messages[test])
        if not case.expected:  # full marks: every test passed
            assert {t.name: t.status for t in report.tests if t.status != "passed"} == {}


def test_every_case_but_the_new_ones_has_a_snapshot_record():
    names = {c.name for c in adversarial_cases()}
    recorded = {k.removeprefix("adversarial/") for k in snapshot.records() if k.startswith("adversarial/")}
    assert set(NOT_IN_SNAPSHOT) <= names, "NOT_IN_SNAPSHOT names a case that is gone"
    assert recorded == (names - set(NOT_IN_SNAPSHOT)) | {"reference"}


def test_no_report_or_feedback_names_a_hidden_case(graded):
    """What a student reads (the report's message, each visible test's message, the feedback
    page) never names a hidden case, whatever the sandbox wrote once it knew them."""
    reports, _, out = graded
    for student, report in reports.items():
        shown = [report.message] + [t.message for t in report.tests if t.visibility == "visible"]
        assert not [m for m in shown if HIDDEN_MESH.search(m)], (student, shown)
        page = (out / student / "feedback.html").read_text()
        assert not HIDDEN_MESH.search(page), student


def test_nothing_reached_the_network(graded, listener):
    assert listener.connections == []


def test_submissions_are_unchanged_on_disk(graded):
    _, notebooks, _ = graded
    assert {name: _digest(path) for name, (path, _) in notebooks.items()} == {
        name: digest for name, (_, digest) in notebooks.items()
    }


def test_no_sandbox_container_outlives_the_run(graded, client):
    assert client.containers.list(all=True, filters={"label": LABEL}) == []


@pytest.mark.parametrize("user", ["1000:100", "200001:200001"], ids=["container", "lane-child"])
def test_the_sandbox_clears_what_its_containers_user_locked(cpu_image, client, tmp_path, user):
    """A folder of mode 0 that a submission's code made in its results, as a fresh container's
    user or as a lane's child (a user of its own): neither the grader's user (unless root) nor any
    other may open it, and the sandbox's clear removes it."""
    from autograder.grading.sandbox.docker_sandbox import DockerSandbox
    from autograder.grading.sandbox.limits import Limits

    folder = tmp_path / "scratch"
    (folder / "out").mkdir(parents=True)
    (folder / "out").chmod(0o777)
    script = "mkdir /out/locked && touch /out/locked/inside /out/.hidden && chmod 0 /out/locked"
    client.containers.run(
        cpu_image,
        entrypoint=["sh", "-c", script],
        command=[],
        user=user,
        remove=True,
        volumes=[f"{folder / 'out'}:/out:rw"],
        network_mode="none",
    )
    assert (folder / "out" / "locked").stat().st_uid == int(user.split(":")[0])
    DockerSandbox(cpu_image, Limits(), client).clear(folder)
    assert list(folder.iterdir()) == []
