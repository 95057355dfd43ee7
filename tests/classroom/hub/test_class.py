"""A real class on a real hub: students log in over HTTP, their servers spawn, they fetch
01_collectives through nbgrader's Assignments endpoints, submit, and each fetches their own
feedback once the grading service has graded it; the instructor's gradebook has both grades."""

from __future__ import annotations

import datetime

import nbformat
import pytest

from classroom.exchange.store import Store

from ...helpers.classroom import wait_for
from ...helpers.course import ASSIGNMENT, NOTEBOOK, solved_notebook, total
from ...helpers.hub import put_notebook, run_jaxcourse, submitted
from ...helpers.submissions import wrong_submission

pytestmark = [pytest.mark.docker, pytest.mark.slow]
WRONG = wrong_submission(ASSIGNMENT, "ring_wrong_direction")


def _feedback_page(hub, user):
    """Fetch Feedback, as the panel does; the page it wrote into the student's own folder."""
    user.action("fetch_feedback", ASSIGNMENT)
    latest = submitted(user.assignments(), ASSIGNMENT)[-1]
    page = hub["classdir"] / "home" / user.name / ASSIGNMENT / "feedback" / latest["timestamp"] / f"{ASSIGNMENT}.html"
    return page.read_text()


def test_a_wrong_password_is_refused(hub):
    from ...helpers.hub import User

    intruder = User(hub["users"]["alice"].hub, "alice", "guess")
    assert intruder.login().status_code == 403
    assert (
        "jupyterhub-session-id" not in intruder.session.cookies
        and "jupyterhub-hub-login" not in intruder.session.cookies
    )


def test_a_name_that_keeps_failing_is_made_to_wait(hub):
    """Past five failures a name waits, even with a right password, and no password is hashed
    for it meanwhile (the flood's cost is measured in benchmarks/login_flood.py)."""
    from ...helpers.hub import User

    guesser = User(hub["users"]["alice"].hub, "nobody-here", "guess")
    assert [guesser.login().status_code for _ in range(5)] == [403] * 5
    refused = guesser.login()
    assert refused.status_code == 429 and "too many failed logins: try again in" in refused.text


def test_a_second_class_of_the_same_name_is_refused(hub, tmp_path):
    """Another class directory also called "class" would take over this class's containers."""
    other, roster = tmp_path / "class", tmp_path / "roster.csv"
    roster.write_text("username,role\nteach,instructor\n")
    done = run_jaxcourse(hub["course"].root, "hub", "up", "--class", str(other), "--roster", str(roster))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"already serves the class in {hub['classdir']}: give this class directory another name" in done.stderr
    assert f"{hub['name']}-hub: already running" not in done.stdout


def test_students_fetch_submit_and_each_sees_only_their_own_feedback(hub, course):
    alice, bob = hub["users"]["alice"], hub["users"]["bob"]
    for user in (alice, bob):
        user.ready()
        released = [a for a in user.assignments() if a["assignment_id"] == ASSIGNMENT]
        assert released and released[0]["status"] == "released"
        user.action("fetch", ASSIGNMENT)
        assert (hub["classdir"] / "home" / user.name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    # A notebook no grader can read, filed before anyone else's (as if it had come in before the
    # exchange refused such files): it must not stop the grading of those after it.
    store = Store(hub["classdir"] / "exchange")
    utf16 = nbformat.writes(solved_notebook(course)).encode("utf-16")
    unreadable = store.submit(
        "alice", ASSIGNMENT, {NOTEBOOK: utf16}, datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    )
    put_notebook(alice, solved_notebook(course))
    put_notebook(bob, solved_notebook(course, WRONG.functions))
    for user in (alice, bob):
        listing = user.action("submit", ASSIGNMENT)
        assert {s["student_id"] for s in submitted(listing, ASSIGNMENT)} == {user.name}  # alice's own planted one too

    for user in (alice, bob):
        wait_for(
            lambda u=user: submitted(u.assignments(), ASSIGNMENT)[-1]["has_exchange_feedback"],
            600,
            f"{user.name}'s feedback",
        )
    pages = {user.name: _feedback_page(hub, user) for user in (alice, bob)}
    assert (
        "feedback for alice" in pages["alice"]
        and f"Score: {total(ASSIGNMENT):g} / {total(ASSIGNMENT):g}" in pages["alice"]
    )
    expected = total(ASSIGNMENT) - sum(full - kept for full, kept in _lost(WRONG))
    assert "feedback for bob" in pages["bob"] and f"Score: {expected:g} / {total(ASSIGNMENT):g}" in pages["bob"]
    assert all(reason in pages["bob"] for reason in WRONG.reasons.values())
    assert "bob" not in pages["alice"] and "alice" not in pages["bob"]
    # Each function at its realistic size on every machine; a correct submission's rank, a wrong one's none.
    assert all("<h2>At scale</h2>" in page for page in pages.values())
    assert "you rank 1 of the 1 correct submissions so far" in pages["alice"] and "Leaderboard:" not in pages["bob"]
    assert store.recorded(unreadable) and "is not UTF-8 text" in store.feedback(unreadable)[ASSIGNMENT]
    # The folder test_attacks.py planted where a half-written upload once stayed is no submission.
    assert ".incoming" not in (hub["classdir"] / "graded" / "recorded.jsonl").read_text()

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub['classdir'] / 'gradebook.db'}") as gb:
        assert gb.find_submission(ASSIGNMENT, "alice").score == total(ASSIGNMENT)
        assert gb.find_submission(ASSIGNMENT, "bob").score == expected


def _lost(wrong):
    from ...helpers.course import full_marks

    marks = full_marks(ASSIGNMENT)
    return [(marks[test], kept) for test, kept in wrong.expected.items()]


def test_a_name_with_an_underscore_works_in_its_own_folder(hub):
    """DockerSpawner escapes such a name (ann_lee -> ann-5flee); her folder is mounted by the name
    the hub prepared, so it is hers (uid 1000), not one the engine made for root."""
    ann = hub["users"]["ann_lee"].ready()
    written = ann.server("PUT", "api/contents/hello.txt", json={"type": "file", "format": "text", "content": "hi"})
    assert written.status_code in (200, 201), written.text
    folder = hub["classdir"] / "home" / "ann_lee"
    assert (folder / "hello.txt").read_text() == "hi" and folder.stat().st_uid == 1000
    assert not any(p.name.startswith("ann-") for p in folder.parent.iterdir())


def test_an_instructor_has_the_class_and_formgrader(hub):
    teach = hub["users"]["teach"].ready()
    formgrader = teach.server("GET", "formgrader")
    assert formgrader.status_code == 200 and "formgrader" in formgrader.text.lower()
    course = teach.server("GET", "api/contents/course/assignments/source")
    assert course.status_code == 200, course.text[:2000]
    assert ASSIGNMENT in {e["name"] for e in course.json()["content"]}
    listed = teach.server("GET", "formgrader/api/assignments").json()  # from the class's own gradebook
    assert [(a["name"], a["max_score"]) for a in listed] == [(ASSIGNMENT, total(ASSIGNMENT))]
    student = hub["users"]["alice"]
    assert student.server("GET", "formgrader").status_code == 404  # students have no formgrader


def test_the_instructor_collects_grades_and_returns_feedback_from_her_lab(hub, client):
    """`jaxcourse collect`, `grade` and `release-feedback` in the instructor's own server, which
    holds no Docker engine (a browser opens it): grading is asked of the class's grading service,
    whose workers grade in their sandboxes, and the grades match what it recorded on submit.
    formgrader's Autograde goes the same way and gives the same points."""
    teach = hub["users"]["teach"].ready()
    lab = client.containers.get(f"{hub['name']}-lab-teach")
    assert not any("docker.sock" in m["Source"] for m in lab.attrs["Mounts"]), lab.attrs["Mounts"]
    # What the exchange holds as submissions (test_attacks.py planted a folder there that is none).
    students = sorted({s.student for s in Store(hub["classdir"] / "exchange").submissions(assignment=ASSIGNMENT)})
    assert students, "no submissions yet: the students' test above submits them"

    def jaxcourse(*args):
        done = lab.exec_run(["jaxcourse", *args, "--class", "/home/jovyan/work/class"])
        assert done.exit_code == 0, done.output.decode()[-3000:]
        return done.output.decode()

    assert f"collected {len(students)} students' {ASSIGNMENT}" in jaxcourse("collect", ASSIGNMENT)
    summary = jaxcourse("grade", ASSIGNMENT, "--quiet", "--force")
    assert f"{len(students)} submissions in" in summary and "the class's grading service" in summary, summary
    assert f"released to the class exchange: {len(students)} students" in jaxcourse("release-feedback", ASSIGNMENT)
    import csv

    from nbgrader.api import Gradebook

    rows = {
        r["student_id"]: float(r["score"])
        for r in csv.DictReader((hub["classdir"] / "graded" / ASSIGNMENT / "grades.csv").open())
    }
    with Gradebook(f"sqlite:///{hub['classdir'] / 'gradebook.db'}") as gb:
        assert rows == {s: gb.find_submission(ASSIGNMENT, s).score for s in students}
    assert all((hub["classdir"] / "feedback" / s / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file() for s in students)
    handed_in = [
        s for s in students if (hub["classdir"] / "submitted" / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    ]
    assert {"alice", "bob"} <= set(handed_in)  # mallory's junk holds no notebook: nbgrader has none to grade
    for student in handed_in:
        graded = teach.server("POST", f"formgrader/api/submission/{ASSIGNMENT}/{student}/autograde", timeout=600)
        assert graded.status_code == 200 and graded.json()["success"], graded.text[-3000:]
    with Gradebook(f"sqlite:///{hub['classdir'] / 'gradebook.db'}") as gb:
        assert {s: rows[s] for s in handed_in} == {s: gb.find_submission(ASSIGNMENT, s).score for s in handed_in}


def test_the_instructor_reads_the_class_report_in_her_server(hub):
    """Her server's report page: the class's grades, and from the exchange who submitted when and
    who has not. A student's server has no such page, and a student's token opens not hers."""
    teach, alice = hub["users"]["teach"].ready(), hub["users"]["alice"].ready()
    path = f"jaxcourse/report/{ASSIGNMENT}"
    page = teach.server("GET", path)
    assert page.status_code == 200, page.text[:2000]
    assert "<h2>Submissions over time</h2>" in page.text and "<polyline" in page.text
    assert "ann_lee" in page.text.split("<h2>Who has not submitted</h2>")[1]  # she wrote a file, submitted nothing
    assert "alice" not in page.text.split("<h2>Who has not submitted</h2>")[1]
    board = page.text.split("<h2>Leaderboard</h2>")[1].split("<h2>")[0]  # alice's right submission, by pseudonym
    assert "<td>1</td>" in board and "alice" not in board and "8 x H100 SXM" in board
    assert alice.server("GET", path).status_code == 404
    borrowed = teach.server("GET", path, headers={"Authorization": f"token {alice.token}"}, allow_redirects=False)
    assert borrowed.status_code in (302, 403) and "ann_lee" not in borrowed.text, borrowed.status_code
