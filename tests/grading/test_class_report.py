"""The class report counts what grading wrote: a class made of the wrong-submission library's
real reports (the grading snapshot's records of 01, each a student), written as `jaxcourse grade`
writes them; the report's numbers are checked against grades.csv, and its page is drawn."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from autograder.grading.record import gradebook
from autograder.grading.reports.class_report import NoResults, read_reports, summarise
from autograder.grading.reports.class_report_html import to_html
from autograder.specs import get

from ..helpers.course import ASSIGNMENT, REPO
from ..helpers.engine import unavailable
from ..helpers.hub import CHROMIUM_FLAGS
from ..helpers.images import chromium_or_skip
from ..helpers.snapshot import records, report_of

SHOTS = REPO / "build" / "test-artifacts" / "class-report"
MAX = {f"{t.name}: {part}": p for t in get(ASSIGNMENT).tasks for part, p in t.points.items()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The results folder of a class: every recorded 01 submission, wrong ones and attacks."""
    out = tmp_path_factory.mktemp("graded")
    prefixes = (f"{ASSIGNMENT}/process/", "adversarial/")
    reports = [
        report_of(key.replace("/", "-"), ASSIGNMENT, r) for key, r in records().items() if key.startswith(prefixes)
    ]
    for report in reports:
        gradebook.write_results(out / report.student / "results.json", report)
    gradebook.write_csv(out / "grades.csv", reports)
    return out


def test_the_report_counts_what_grades_csv_says(graded):
    rows = list(csv.DictReader((graded / "grades.csv").open()))
    report = summarise(ASSIGNMENT, read_reports(graded, ASSIGNMENT))
    assert report.students == len(rows) > 20
    assert report.statuses == {s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}}
    assert sorted(report.scores) == sorted(float(r["score"]) for r in rows if r["status"] == "graded")
    assert report.max_score == max(float(r["max_score"]) for r in rows if r["status"] == "graded")
    assert [p.name for p in report.parts] == list(MAX)
    ring = next(p for p in report.parts if p.name == "ring_all_gather: technique")
    kept = [
        json.loads((graded / r["student_id"] / "results.json").read_text()) for r in rows if r["status"] == "graded"
    ]
    assert ring.passed == sum(t["score"] == t["max_score"] for k in kept for t in k["tests"] if t["name"] == ring.name)
    assert ring.discrimination is not None and -1 <= ring.discrimination <= 1


def test_reasons_are_counted_once_per_student_and_part_with_an_example(graded):
    report = summarise(ASSIGNMENT, read_reports(graded, ASSIGNMENT))
    said = [
        t
        for r in read_reports(graded, ASSIGNMENT).reports
        if r.status == "graded"
        for t in r.tests
        if t.name == "ring_all_gather: technique" and "contains all-gather" in t.message
    ]
    forbidden = next(
        r
        for r in report.reasons
        if r.kind == "forbidden collective: all_gather" and r.part == "ring_all_gather: technique"
    )
    assert forbidden.students == len(said) > 0 and "the compiled HLO contains all-gather" in forbidden.example
    assert [r.students for r in report.reasons] == sorted((r.students for r in report.reasons), reverse=True)
    assert report.first_look == report.reasons[0]
    assert not any(r.kind == "other" for r in report.reasons)
    timeouts = next(r for r in report.not_graded if r.kind == "timeout")
    assert timeouts.students == report.statuses["timeout"] and "did not finish" in timeouts.example


def test_the_page_draws_the_scores_and_the_parts_and_escapes_every_message(graded):
    report = summarise(ASSIGNMENT, read_reports(graded, ASSIGNMENT))
    page = to_html(report)
    assert "<title>students per score band, out of 50</title>" in page
    assert "<title>share of students who passed each part</title>" in page
    assert page.count("<svg") == 2 and "Look at first:" in page
    assert "<script" not in page and "└───" in page  # a crash's last output, as text


def test_the_command_writes_the_page_and_prints_json(graded, tmp_path):
    argv = [sys.executable, "-m", "jaxcourse", "report", ASSIGNMENT, "--out", str(graded)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "look at first:" in done.stdout and (graded / "report.html").stat().st_size > 5000
    data = json.loads(subprocess.run([*argv, "--json"], capture_output=True, text=True, cwd=tmp_path).stdout)
    assert data["students"] == len(list(graded.glob("*/results.json"))) and data["first_look"]["students"] >= 2


def test_no_results_says_what_to_run(tmp_path):
    with pytest.raises(NoResults, match="run jaxcourse grade 01_collectives first"):
        read_reports(tmp_path, ASSIGNMENT)


def test_the_page_renders_in_a_browser(graded):
    """Debian's chromium, driven by Playwright, shows the page with both figures drawn; the
    screenshot is kept under build/test-artifacts/class-report/."""
    chromium_or_skip()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        unavailable("Playwright", str(err))
    page_file = graded / "report.html"
    page_file.write_text(to_html(summarise(ASSIGNMENT, read_reports(graded, ASSIGNMENT))))
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(page_file.as_uri())
        assert page.locator("h1").inner_text() == f"{ASSIGNMENT}: the class at a glance"
        boxes = [page.locator("svg").nth(i).bounding_box() for i in range(2)]
        assert all(box and box["width"] > 300 and box["height"] > 100 for box in boxes), boxes
        page.screenshot(path=str(SHOTS / "report.png"), full_page=True)
        browser.close()
    assert (SHOTS / "report.png").stat().st_size > 10_000


def test_a_results_file_that_cannot_be_read_is_named_not_dropped(graded, tmp_path):
    import shutil

    copy = tmp_path / "graded"
    shutil.copytree(graded, copy)
    victim = sorted(copy.glob("*/results.json"))[0]
    victim.write_text("{ cut short")
    report = summarise(ASSIGNMENT, read_reports(copy, ASSIGNMENT))
    assert report.unreadable == [victim.parent.name] and report.students == len(list(graded.glob("*/results.json"))) - 1
    assert f"grade these students again): {victim.parent.name}" in to_html(report)
