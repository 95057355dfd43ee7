"""The grading service records a graded submission as the class's rules say: the feedback the
student may fetch (every test, visible tests only, or none until released), the gradebook for the
latest submission only, and one outcome per submission.

The reports come from the real grader's own zero report, but for one test in which the queue's
worker code grades in this process; the queue itself is tried for real in tests/classroom/hub and
tests/classroom/queue."""

from __future__ import annotations

import datetime
import html
import json
import logging
import shutil
import threading

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.core.course import Course
from autograder.grading.record.batch import grade_class
from autograder.grading.record.recorder import JOURNAL
from autograder.specs import get
from classroom import roster
from classroom.classdir import ClassDir
from classroom.grading.class_run import through_service
from classroom.grading.identity import expected_image
from classroom.grading.service import GradingService
from classroom.grading.worker import Worker
from classroom.queue.inbox import Inbox

from ...helpers.course import ASSIGNMENT, NOTEBOOK, REPO, solved_notebook, total, write_submission
from ...helpers.malformed import KINDS

T0 = datetime.datetime(2026, 11, 30, 12, 0, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """A checkout of 01 alone and a class with 01 released into it (nbgrader and the exchange)."""
    base = tmp_path_factory.mktemp("service")
    checkout = Course(base / "checkout")
    shutil.copytree(REPO / "solutions", checkout.solutions_dir, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "assignments" / "source" / ASSIGNMENT, checkout.nbgrader_root / "source" / ASSIGNMENT)
    shutil.copy(REPO / "assignments" / "nbgrader_config.py", checkout.nbgrader_root)
    classdir = ClassDir(base / "class").init(checkout)
    classdir.release(checkout, ASSIGNMENT)
    return checkout, classdir


def _service(classroom, rules: str) -> GradingService:
    checkout, classdir = classroom
    (checkout.root / "jaxcourse.toml").write_text(rules)
    return GradingService(classdir.course(checkout), classdir.store, dispatcher=None)


def _graded(service, student, when, scored: set[str]):
    """A submission of ``student`` at ``when`` and its report: full points on the tests whose
    names start with one of ``scored``, none elsewhere."""
    submission = service.store.submit(student, ASSIGNMENT, {f"{ASSIGNMENT}.ipynb": b"{}"}, when)
    report = service.grader(ASSIGNMENT).failed(student, "graded", "")
    for test in report.tests:
        if any(test.name.startswith(name) for name in scored):
            test.score, test.status, test.message = test.max_score, "passed", ""
        else:
            test.status, test.message = "failed", f"{test.name} is wrong: look at the ring's direction"
    return submission, report


@pytest.mark.parametrize(
    "shown, visible, hidden",
    [("all", True, True), ("visible", True, False), ("none", False, False)],
)
def test_the_feedback_shows_what_the_rules_allow(classroom, shown, visible, hidden):
    service = _service(classroom, f'[class]\nfeedback = "{shown}"\n')
    submission, report = _graded(service, f"student-{shown}", T0, {"local_shape"})
    service.record(submission, report)
    pages = service.store.feedback(submission)
    assert bool(pages) == visible
    page = pages.get(ASSIGNMENT, "")
    assert ("ring_all_gather: values" in page) == visible
    assert ("ring_all_gather: hidden values" in page) == hidden
    shown_tests = [t for t in report.tests if hidden or t.visibility == "visible"]
    score, out_of = sum(t.score for t in shown_tests), sum(t.max_score for t in shown_tests)
    assert (f"Score: {score:g} / {out_of:g}" in page) == visible  # of the tests shown
    points = get(ASSIGNMENT).task("local_shape").points  # its hidden values count only where shown
    assert score == (points["values"] + points["hidden values"] if hidden else points["values"])


def test_only_the_latest_submission_sets_the_grade_and_each_is_recorded_once(classroom):
    service = _service(classroom, "")
    _, classdir = classroom
    early, early_report = _graded(service, "ada", T0, set())
    late, late_report = _graded(service, "ada", T0 + datetime.timedelta(hours=1), {"local_shape", "ring_all_gather"})
    service.record(late, late_report)  # the later one is graded first, the earlier one after it
    service.record(early, early_report)
    with Gradebook(f"sqlite:///{classdir.root / 'gradebook.db'}") as gb:
        assert gb.find_submission(ASSIGNMENT, "ada").score == late_report.score > 0
    results = json.loads((classdir.root / "graded" / ASSIGNMENT / "ada" / "results.json").read_text())
    assert results["score"] == late_report.score and late_report.score < total(ASSIGNMENT)
    assert service.store.recorded(early) and service.store.recorded(late)
    journal = [json.loads(line) for line in (classdir.root / "graded" / JOURNAL).read_text().splitlines()]
    assert [(j["submission"], j["latest"]) for j in journal if j["submission"].startswith("ada/")] == [
        (late.key, True),
        (early.key, False),
    ]
    assert service.store.feedback(early) and service.store.feedback(late)  # each gets its own


class InlineDispatcher:
    """The queue without Celery: a job is graded by the real worker's code the moment it is sent,
    and its outcome comes back on the next poll."""

    def __init__(self, worker: Worker | None) -> None:
        self.worker, self.done = worker, []

    def send(self, job) -> None:
        self.done.append((job, self.worker.grade(job, job["id"])))

    def poll(self):
        done, self.done = self.done, []
        return done


@pytest.mark.slow
def test_no_submission_stops_the_others_and_each_is_told_why(classroom, course, tmp_path):
    """Malformed notebooks of every kind and an assignment no grader knows, filed before a good
    one (students sort first): each is recorded invalid with its reason in the student's
    feedback and never sent, and the good one is graded, full marks in the gradebook."""
    service = _service(classroom, "")
    checkout, classdir = classroom
    service.dispatcher = InlineDispatcher(
        Worker(service.course, "process", "", expected_image(checkout.root), tmp_path / "worker", b"key")
    )
    good = solved_notebook(course)
    planted = {}
    for kind in KINDS:
        submission = service.store.submit(f"a-{kind.name}", ASSIGNMENT, {"x": b""}, T0)
        kind.write(submission.path / NOTEBOOK, good)  # on disk as the kind has it: the exchange refuses most
        planted[submission] = kind.reason
    unknown = service.store.submit("a-unknown", "00_unknown", {NOTEBOOK: nbformat.writes(good).encode()}, T0)
    alice = service.store.submit("alice", ASSIGNMENT, {NOTEBOOK: nbformat.writes(good).encode()}, T0)

    assert service.step() == len(planted) + 2
    assert service.dispatcher.worker.grader(ASSIGNMENT)  # the worker graded: alice's job went out
    for submission, reason in planted.items():
        outcome = json.loads(service.store.outcome_path(submission).read_text())
        assert outcome["status"] == "invalid" and outcome["score"] == 0, (submission.key, outcome)
        assert reason in html.unescape(service.store.feedback(submission)[ASSIGNMENT]), submission.key
    page = service.store.feedback(unknown)["00_unknown"]
    assert "unknown assignment &#x27;00_unknown&#x27;" in page and service.store.recorded(unknown)
    with Gradebook(f"sqlite:///{classdir.root / 'gradebook.db'}") as gb:
        assert gb.find_submission(ASSIGNMENT, "alice").score == total(ASSIGNMENT)
        assert gb.find_submission(ASSIGNMENT, "a-empty").score == 0
    assert f"Score: {total(ASSIGNMENT):g} / {total(ASSIGNMENT):g}" in service.store.feedback(alice)[ASSIGNMENT]
    assert service.step() == 0  # all recorded: nothing is sent or recorded again


def test_why_a_notebook_cannot_be_read_is_shown_even_when_feedback_waits(classroom):
    """Under ``feedback = "none"`` the tests' verdicts wait for release; the reason a notebook
    could not be read tells nothing of them and is shown at once."""
    service = _service(classroom, '[class]\nfeedback = "none"\n')
    submission = service.store.submit("erin", ASSIGNMENT, {NOTEBOOK: b"{"}, T0)
    notebook = submission.path / NOTEBOOK
    service.record(submission, service.grader(ASSIGNMENT).grade("erin", notebook))
    page = service.store.feedback(submission)[ASSIGNMENT]
    assert "is not a readable notebook (not JSON; cut short?)" in page
    assert "ring_all_gather" not in page and "Score: 0 / 0" in page


def test_only_the_rosters_members_are_graded(classroom, tmp_path, caplog):
    """A folder in the exchange under a name the roster does not hold (planted, or left by a
    member since removed) is never graded, and said once."""
    _, classdir = classroom
    service = _service(classroom, "")
    service.dispatcher = InlineDispatcher(worker=None)  # nothing here is sent
    roster.install(
        [roster.Member("teach", "instructor"), roster.Member("ada", "student")],
        classdir.root / "hub",
        tmp_path / "secrets",
    )
    try:
        stranger = service.store.submit("zed", ASSIGNMENT, {NOTEBOOK: b"{"}, T0)
        member = service.store.submit("ada", ASSIGNMENT, {NOTEBOOK: b"{"}, T0 + datetime.timedelta(days=9))
        with caplog.at_level(logging.INFO, logger="classroom"):
            assert service.step() == 1 and service.step() == 0
        assert service.store.recorded(member) and not service.store.recorded(stranger)
        refused = f"jaxcourse grading service: {stranger.key}: not on the class's roster: never graded"
        assert caplog.messages.count(refused) == 1
    finally:
        (classdir.root / "hub" / "roster.json").unlink()


@pytest.mark.slow
def test_an_instructors_server_grades_through_the_service(classroom, course, tmp_path):
    """`jaxcourse grade --sandbox service` in an instructor's server, which holds no engine: each
    submission is asked through the class directory, graded by the workers as on submit, and
    recorded there as a local run records it; a notebook no grader can read is refused there."""
    service = _service(classroom, "")
    checkout, classdir = classroom
    service.dispatcher = InlineDispatcher(
        Worker(service.course, "process", "", expected_image(checkout.root), tmp_path / "worker", b"key")
    )
    submitted = tmp_path / "submitted"
    write_submission(submitted, "ada", solved_notebook(course))
    write_submission(submitted, "eve", solved_notebook(course)).write_bytes(b"\xff\xfe")
    stop = threading.Event()
    serving = threading.Thread(target=service.run, args=(stop.is_set,), daemon=True)
    serving.start()
    try:
        run = grade_class(
            ASSIGNMENT,
            service.course,
            submitted,
            tmp_path / "out",
            progress=False,
            queue=through_service(service.course),
        )
    finally:
        stop.set()
        serving.join(30)
    got = {r.student: (r.status, r.score) for r in run.reports}
    assert got == {"ada": ("graded", total(ASSIGNMENT)), "eve": ("invalid", 0.0)}
    assert run.how == "the class's grading service"
    assert not list(Inbox.of(classdir.root).root.iterdir())  # every job answered and taken
