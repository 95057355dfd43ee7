"""The `jaxcourse` command end to end: bad input, and a whole class into nbgrader's gradebook."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.core.machines import MACHINES
from autograder.grading.pipeline.grader import grader_for
from autograder.grading.reports import scale_view
from autograder.specs import get
from jaxcourse import main

from ..helpers.course import ASSIGNMENT, NOTEBOOK, solved_notebook, total, visible_total, write_submission
from ..helpers.malformed import KINDS
from ..helpers.submissions import wrong_submission

JAXCOURSE = [sys.executable, "-m", "jaxcourse"]
TOTAL = total(ASSIGNMENT)


def run(*args: str, cwd: Path, timeout: float = 600, expected: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("JAXCOURSE_ROOT", None)
    if expected is not None:
        env["JAXCOURSE_EXPECTED"] = str(expected)
    return subprocess.run([*JAXCOURSE, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.parametrize(
    "args, message",
    [
        (["grade", "99_nope"], "unknown assignment '99_nope'; known: 01_collectives"),
        (["grade", ASSIGNMENT, "--jobs", "0"], "'0' must be at least 1"),
        (["grade", ASSIGNMENT, "--submissions", "/no/such/dir"], "no submissions directory at /no/such/dir"),
        (["check", "/no/such.ipynb"], "no notebook at /no/such.ipynb"),
        (["release", "99_nope"], "no assignment '99_nope'"),
        (["similar", ASSIGNMENT, "--threshold", "90"], "'90' must be a share above 0 and at most 1, such as 0.5"),
        (["similar", ASSIGNMENT, "--text-threshold", "half"], "'half' is not a number"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["worker", "--broker", "http://:secret@host"], "'http://:***@host' is not a Redis URL"),
        (["worker"], "say where the queue is: --broker redis://:PASSWORD@HOST:6379/0, or $JAXCOURSE_BROKER"),
        (["grade", ASSIGNMENT, "--broker", "redis//host"], "is not a Redis URL: write redis://:PASSWORD@HOST"),
        (["collect", ASSIGNMENT], "say where from: --class DIR"),
        (["collect", ASSIGNMENT, "--class", "/no/such"], "/no/such is not a class directory"),
        (["grade", ASSIGNMENT, "--class", "/no/such"], "/no/such is not a class directory"),
        (["release-feedback", ASSIGNMENT], "no feedback under"),
        (["hub", "up", "--roster", "/no/roster.csv"], "no roster at /no/roster.csv"),
        (["hub", "up", "--class", "/tmp/jaxcourse-no-class"], "no roster installed in /tmp/jaxcourse-no-class"),
        (
            ["hub", "up", "--host", "0.0.0.0"],
            "publishing the class on 0.0.0.0 needs TLS: pass --tls-cert and --tls-key",
        ),
        (["hub", "up", "--tls-cert", "/no/cert.pem"], "--tls-cert and --tls-key go together"),
        (["hub", "up", "--tls-cert", "/no/c.pem", "--tls-key", "/no/k.pem"], "no TLS file at /no/c.pem"),
        (
            ["hub", "up", "--host", "0.0.0.0", "--tls-cert", "/no/c.pem", "--tls-key", "/no/k.pem"],
            "publishing the class on 0.0.0.0 needs --domain NAME",
        ),
    ],
)
def test_bad_input_gets_one_line_and_a_nonzero_exit(course, args, message):
    done = run(*args, cwd=course.root)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_check_reads_a_corrupt_notebook_as_bad_input(course, tmp_path):
    bad = tmp_path / NOTEBOOK
    bad.write_text("{ this is not json")
    done = run("check", str(bad), cwd=course.root)
    assert done.returncode == 2 and "is not a readable notebook" in done.stderr


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_check_reads_every_malformed_notebook_as_bad_input(kind, course, tmp_path, capsys):
    """The command's own entry point, in this process (the subprocess test above covers the rest
    of the way): exit 2, one line with the reason, nothing else."""
    path = tmp_path / NOTEBOOK
    kind.write(path, solved_notebook(course))
    assert main(["check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1 and kind.reason in err, err


def test_check_outside_a_course_uses_the_shipped_records(course, tmp_path):
    """A student's copy has no solutions: visible cases only, judged against the records the
    release shipped (as the image names them), still full marks for a right answer."""
    nb = solved_notebook(course)
    path = tmp_path / NOTEBOOK
    nbformat.write(nb, path)
    done = run("check", str(path), "--json", cwd=tmp_path, expected=course.nbgrader_root / "expected")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "graded"
    assert report["score"] == report["max_score"] == visible_total(ASSIGNMENT) < TOTAL  # the hidden points are not
    assert all(t["visibility"] == "visible" for t in report["tests"])
    scaled = {t.name for t in get(ASSIGNMENT).tasks if t.at_scale is not None}
    assert set(report["at_scale"]) == scaled  # the shipped records hold the reference at scale too


def test_check_prints_each_projection_beside_the_reference_s(course, tmp_path):
    """The plain report ends with each function's program at its realistic size on every
    machine: the student's time, the reference's and their ratio (a right answer's is 1.00x)."""
    path = tmp_path / NOTEBOOK
    nbformat.write(solved_notebook(course), path)
    done = run("check", str(path), cwd=tmp_path, expected=course.nbgrader_root / "expected")
    assert done.returncode == 0, done.stderr
    start = done.stdout.index(f"\n\n{scale_view.MODEL}")
    text = done.stdout[start : done.stdout.index("\nscore ")]
    for task in get(ASSIGNMENT).tasks:
        if task.at_scale is not None:
            assert f"{task.name} at {task.at_scale.case.label()} ({task.at_scale.why}):" in text
    rows = [line.split() for line in text.splitlines() if line.startswith("  ") and "max(compute " in line]
    assert len(rows) == len(MACHINES) * sum(t.at_scale is not None for t in get(ASSIGNMENT).tasks)
    assert all("1.00x" in row for row in rows), rows
    assert all(row[row.index("1.00x") - 1] in ("s", "ms", "µs", "ns") for row in rows), rows  # times with units


# The class below: who is graded, and who gets a row of zeros with the reason (every malformed
# kind from tests/helpers/malformed.py beside them, each its own student).
GRADED = {"alice", "frank"}
INVALID = {
    "carol": "is not a readable notebook (not JSON",
    "dave": "is for 02_sharded_matmul, not 01_collectives",
    "erin": "no notebook at",
    **{k.name: k.reason for k in KINDS},
}
STUDENTS = len(GRADED) + 1 + len(INVALID)  # bob's notebook raises


@pytest.fixture(scope="module")
def graded_class(course, tmp_path_factory):
    """Right (alice; frank in an old nbformat, with a time no gradebook can take), raising (bob),
    corrupt, for another assignment, a missing notebook, and one student per malformed kind."""
    submitted = tmp_path_factory.mktemp("submitted")
    write_submission(submitted, "alice", solved_notebook(course))
    (submitted / "alice" / ASSIGNMENT / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    raising = wrong_submission(ASSIGNMENT, "raises_at_import")
    write_submission(submitted, "bob", solved_notebook(course, extra_cell=raising.extra_cell))
    write_submission(submitted, "carol", solved_notebook(course)).write_text("{broken")
    other = solved_notebook(course)
    other.metadata["jaxcourse"] = {"assignment": "02_sharded_matmul"}
    write_submission(submitted, "dave", other)
    (submitted / "erin" / ASSIGNMENT).mkdir(parents=True)
    write_submission(submitted, "frank", nbformat.convert(solved_notebook(course), 3))
    (submitted / "frank" / ASSIGNMENT / "timestamp.txt").write_bytes(b"\xff\xfe the day before yesterday")
    for kind in KINDS:
        (submitted / kind.name / ASSIGNMENT).mkdir(parents=True)
        kind.write(submitted / kind.name / ASSIGNMENT / NOTEBOOK, solved_notebook(course))
    out = tmp_path_factory.mktemp("graded")
    done = run(
        "grade",
        ASSIGNMENT,
        "--submissions",
        str(submitted),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--sandbox",
        "process",
        "--profile",
        cwd=course.root,
    )
    return done, out, submitted


@pytest.mark.slow
def test_grade_reports_every_student_and_exits_zero(graded_class):
    """No notebook, however malformed, stops the class: each gets its own row of zeros and its
    one-line reason, and everyone else is graded."""
    done, out, _ = graded_class
    assert done.returncode == 0, done.stderr
    assert f"{STUDENTS} submissions in" in done.stdout
    assert f"{len(GRADED)} graded, {STUDENTS - len(GRADED)} failed to run" in done.stdout
    assert re.search(r"^  carol +invalid +", done.stdout, re.M)  # each failure, with its reason
    assert "grading" in done.stderr  # the progress bar
    assert "isolates nothing" in done.stderr
    assert "Traceback" not in done.stderr
    with open(out / "grades.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["student_id", "assignment", "score", "max_score", "status"]
    got = {r["student_id"]: (r["score"], r["status"]) for r in rows}
    assert got == {
        **dict.fromkeys(GRADED, (f"{TOTAL:g}", "graded")),
        "bob": ("0", "error"),
        **dict.fromkeys(INVALID, ("0", "invalid")),
    }
    for student, reason in INVALID.items():
        message = json.loads((out / student / "results.json").read_text())["message"]
        assert reason in message and "\n" not in message, (student, message)
    bob = json.loads((out / "bob" / "results.json").read_text())
    assert "RuntimeError" in bob["message"] and "I broke my notebook" in bob["message"]
    assert wrong_submission(ASSIGNMENT, "raises_at_import").message in bob["message"]
    alice = json.loads((out / "alice" / "results.json").read_text())
    assert {tuple(sorted(t)) for t in alice["tests"]} == {
        ("detail", "figure", "grade_id", "max_score", "message", "name", "score", "signature", "status", "visibility")
    }


@pytest.mark.slow
def test_grade_profile_says_where_the_time_went(graded_class, course):
    """Every submission was recorded; only alice's, bob's and frank's notebooks ran (the others
    could not be read); only alice's and frank's reached the measurement, where each of their
    programs was measured by the trusted worker or reused from an earlier grading of the same
    program in this session (frank's are alice's, in an older file format)."""
    done, _, _ = graded_class
    profile = done.stdout[done.stdout.index(f"profile of {STUDENTS} submissions") :]
    seconds = {
        m[1]: (float(m[2]), int(m[3])) for m in re.finditer(r"^  (\S.*?) +(\d+\.\d+) s  n=(\d+)$", profile, re.M)
    }
    counts = {m[1]: int(m[2]) for m in re.finditer(r"^  (\S.*?) +\d+\.\d+ +total (\d+)  n=\d+$", profile, re.M)}
    assert seconds["record"][1] == STUDENTS
    assert seconds["runner: run the cells"][1] == seconds["sandbox: all"][1] == 3
    assert seconds["sandbox: all"][0] >= seconds["runner: run the cells"][0]
    assert seconds["sandbox: CPU"][1] == 3 and seconds["sandbox: CPU"][0] > 0  # each forked runner's own
    assert seconds["trusted: all"][1] == 2
    measured_here = 2 * len(grader_for(ASSIGNMENT, course).tests) - counts["measurements reused"]
    if measured_here:
        assert 1 <= seconds["trusted: worker start-up"][1] <= 2 and "programs compiled" in counts
        assert seconds["trusted: CPU"][1] == seconds["trusted: worker start-up"][1]
    else:
        assert "trusted: worker start-up" not in seconds  # every program was seen before


@pytest.mark.slow
def test_grades_land_in_nbgraders_gradebook(graded_class, course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.nbgrader_root / 'gradebook.db'}") as gb:
        alice = gb.find_submission(ASSIGNMENT, "alice")
        assert alice.score == alice.max_score == TOTAL
        assert str(alice.timestamp).startswith("2026-11-20 10:00:00")
        assert gb.find_submission(ASSIGNMENT, "bob").score == 0
        cell = gb.find_grade("test_ring_all_gather", "01_collectives", ASSIGNMENT, "alice")
        assert cell.score == cell.max_score == get(ASSIGNMENT).task("ring_all_gather").max_score
    exported = course.root / "nbgrader-grades.csv"
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "export", f"--to={exported}"],
        cwd=course.nbgrader_root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    with open(exported) as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT}
    assert float(rows["alice"]["score"]) == TOTAL


@pytest.mark.slow
def test_feedback_never_shows_hidden_test_source(graded_class, course):
    _, out, _ = graded_class
    html = (out / "alice" / "feedback.html").read_text()
    assert "ring_all_gather: hidden values" in html and f"Score: {TOTAL:g} / {TOTAL:g}" in html
    source = (course.nbgrader_root / "source" / ASSIGNMENT / NOTEBOOK).read_text()
    assert "hidden=True" in source
    for page in (out / "alice" / "feedback.html", out / "alice" / "feedback.md", out / "bob" / "feedback.md"):
        text = page.read_text()
        assert "hidden=True" not in text and "HIDDEN TESTS" not in text
    assert "Your notebook raised an error" in (out / "bob" / "feedback.md").read_text()


@pytest.mark.slow
def test_grading_again_reuses_reports_and_keeps_the_gradebook(graded_class, course):
    _, out, submitted = graded_class
    before = (out / "alice" / "results.json").read_text()
    again = ("grade", ASSIGNMENT, "--submissions", str(submitted), "--out", str(out), "--quiet", "--sandbox", "process")
    done = run(*again, cwd=course.root)
    assert done.returncode == 0, done.stderr
    assert f"{STUDENTS} unchanged since the last run" in done.stdout
    assert (out / "alice" / "results.json").read_text() == before
    forced = run(*again, "--force", cwd=course.root)
    assert forced.returncode == 0 and "unchanged" not in forced.stdout, forced.stdout
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.nbgrader_root / 'gradebook.db'}") as gb:
        assert gb.find_submission(ASSIGNMENT, "alice").score == TOTAL
