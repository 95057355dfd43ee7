"""A hub class's assignment over time, from a real exchange store and roster (no hub needed):
when submissions came in, how long each student took to full marks, who has not submitted and
who was late; drawn in the class report, printed by `jaxcourse report --class`, and served as a
page of an instructor's Jupyter server (a real one, on loopback), to her login only."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys

import pytest
import requests

from autograder.core.records import TestResult as Result  # not Test*: pytest would try to collect it
from autograder.grading.record import gradebook
from autograder.grading.submission.report import Report
from classroom import roster
from classroom.classdir import ClassDir
from classroom.exchange.policy import Policy
from classroom.exchange.store import Store
from classroom.hub import class_timeline_html
from classroom.hub.class_timeline import timeline

from ...helpers.classroom import wait_for
from ...helpers.course import ASSIGNMENT, NOTEBOOK
from ...helpers.hub import run_jaxcourse
from ...helpers.net import free_port

T0 = datetime.datetime(2026, 11, 2, 9, 0, tzinfo=datetime.UTC)
DUE = "2026-11-09T23:59:00+00:00"
HOUR = datetime.timedelta(hours=1)
SUBMISSIONS = [  # student, when, score out of 10 (None: not graded yet)
    ("ana", T0, 5.0),
    ("ben", T0 + HOUR, 10.0),
    ("ana", T0 + 3 * HOUR, 10.0),
    ("cat", T0 + 4 * HOUR, 3.0),
    ("ana", T0 + 5 * HOUR, 10.0),  # full marks again: the first time counts
    ("eve", T0 + 200 * HOUR, 10.0),  # after the due date
    ("fay", T0 + 201 * HOUR, None),
]
ROSTER = (
    "username,role\nteach,instructor\nana,student\nben,student\ncat,student\ndan,student\neve,student\nfay,student\n"
)


def _class(root):
    store = Store(root / "exchange")
    for student, when, score in SUBMISSIONS:
        submission = store.submit(student, ASSIGNMENT, {NOTEBOOK: b"{}"}, when)
        if score is not None:
            store.record_outcome(submission, {"status": "graded", "score": score, "max_score": 10.0})
    (root / "roster.csv").write_text(ROSTER)
    roster.install(roster.read(root / "roster.csv"), root / "hub", root / "secrets")
    return store


def test_the_timeline_counts_what_the_exchange_kept(tmp_path):
    store = _class(tmp_path)
    t = timeline(store, tmp_path / "hub", Policy(due=DUE), ASSIGNMENT, now=T0 + 100 * HOUR)
    assert [(a.student, a.score) for a in t.arrivals] == [(s, score) for s, _, score in SUBMISSIONS]
    assert t.to_full_marks == {"ana": 3 * 3600.0, "ben": 0.0, "cat": None, "eve": 0.0, "fay": None}
    assert t.median_to_full_marks == 0.0  # ana 3 h, ben and eve at once
    assert t.not_submitted == ["dan"]  # the instructor submits nothing and is not counted
    assert t.late == ["eve", "fay"] and not t.past_due


def test_the_page_draws_every_arrival_and_the_due_date(tmp_path):
    t = timeline(_class(tmp_path), tmp_path / "hub", Policy(due=DUE), ASSIGNMENT, now=T0 + 300 * HOUR)
    page = class_timeline_html.to_html(t)
    points = re.search(r'<polyline [^>]*points="([^"]*)"', page).group(1).split()
    assert len(points) == 1 + 2 * len(SUBMISSIONS)  # a step up at each arrival
    assert [float(p.split(",")[1]) for p in points][-1] < float(points[0].split(",")[1])  # it rises
    assert page.count('stroke-dasharray="4"') == 1  # the due date
    assert "Did not submit by the due date (1 of the roster's 6 students): dan." in page
    assert "3 of 5 students who submitted reached full marks; the median took 0 s" in page
    assert "<tr><td>ana</td><td>3.0 h</td></tr>" in page and "<tr><td>cat</td><td>not yet</td></tr>" in page


@pytest.fixture(scope="module")
def classdir(course, tmp_path_factory):
    """A hub's class directory with the exchange above, and two students graded."""
    classdir = ClassDir(tmp_path_factory.mktemp("timeline") / "class").init(course)
    _class(classdir.root)
    for student, score, message in (("ana", 10.0, ""), ("ben", 0.0, "<script>alert(1)</script> on device 3")):
        status = "passed" if score else "failed"
        test = Result("ring_all_gather: values", "ring_all_gather", score, 10.0, status, message, "visible")
        report = Report(student, ASSIGNMENT, "graded", "", [test])
        gradebook.write_results(classdir.root / "graded" / ASSIGNMENT / student / "results.json", report)
    return classdir


def test_jaxcourse_report_on_a_class_adds_its_timeline(course, classdir):
    argv = ["report", ASSIGNMENT, "--class", str(classdir.root)]
    done = run_jaxcourse(course.root, *argv)
    assert done.returncode == 0, done.stderr
    assert "not submitted: dan" in done.stdout
    page = (classdir.root / "graded" / ASSIGNMENT / "report.html").read_text()
    assert "<h2>Submissions over time</h2>" in page and "7 submissions from 5 students" in page
    data = json.loads(run_jaxcourse(course.root, *argv, "--json").stdout)
    assert data["timeline"]["not_submitted"] == ["dan"] and len(data["timeline"]["arrivals"]) == len(SUBMISSIONS)


@pytest.fixture(scope="module")
def instructors_server(course, classdir, tmp_path_factory):
    """A Jupyter server as an instructor's runs on the hub: the report page's extension loaded,
    the class directory and the course named in its environment, a token for its login."""
    port, token = free_port(), "instructor-token-8d1e"
    env = {**os.environ, "JAXCOURSE_ROOT": str(course.root), "JAXCOURSE_CLASS": str(classdir.root)}
    argv = [
        sys.executable,
        "-m",
        "jupyter_server",
        f"--port={port}",
        "--ip=127.0.0.1",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={tmp_path_factory.mktemp('home')}",
        "--ServerApp.jpserver_extensions=classroom.hub.report_page=True",
        "--allow-root",
    ]
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{url}/api/status", token), 60, "the Jupyter server")
        yield url, token
    finally:
        server.terminate()
        server.wait(10)


def _answers(url, token):
    try:
        return requests.get(url, headers={"Authorization": f"token {token}"}, timeout=2).ok
    except requests.ConnectionError:
        return False


def test_the_instructors_server_serves_the_report_with_its_timeline(instructors_server):
    url, token = instructors_server
    page = requests.get(f"{url}/jaxcourse/report/{ASSIGNMENT}", headers={"Authorization": f"token {token}"})
    assert page.status_code == 200, page.text[:500]
    assert (
        "<h2>Submissions over time</h2>" in page.text
        and "Not submitted yet (1 of the roster's 6 students): dan." in page.text
    )
    assert "&lt;script&gt;alert(1)" in page.text and "<script>" not in page.text  # a message is text, never markup
    assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")  # nothing in it runs


def test_without_the_instructors_login_the_page_shows_nothing(instructors_server):
    url, _ = instructors_server
    for headers in ({}, {"Authorization": "token guessed"}):
        page = requests.get(f"{url}/jaxcourse/report/{ASSIGNMENT}", headers=headers, allow_redirects=False)
        assert page.status_code in (302, 403) and "ana" not in page.text, (page.status_code, page.text[:300])


def test_an_unknown_assignment_or_a_path_out_is_refused_with_the_reason(instructors_server):
    url, token = instructors_server
    auth = {"Authorization": f"token {token}"}
    unknown = requests.get(f"{url}/jaxcourse/report/99_nothing", headers=auth)
    assert unknown.status_code == 404 and unknown.text.startswith("unknown assignment '99_nothing'; known: "), (
        unknown.text
    )
    out = requests.get(f"{url}/jaxcourse/report/..%2F..%2Fetc", headers=auth)
    assert out.status_code == 404 and "root:" not in out.text
