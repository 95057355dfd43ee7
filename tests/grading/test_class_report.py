"""The class report counts what grading wrote: a class made of the wrong-submission library's
real reports (the grading snapshot's records of 01, each a student), written as `jaxcourse grade`
writes them; the report's numbers are checked against grades.csv, and its page is drawn."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from autograder.core.records import TestResult as Row
from autograder.grading import gradebook
from autograder.grading.class_report import NoResults, read_reports, summarise
from autograder.grading.class_report_html import to_html
from autograder.grading.report import Report
from autograder.specs import get

from ..helpers.course import ASSIGNMENT
from ..helpers.snapshot import records

MAX = {f"{t.name}: {part}": p for t in get(ASSIGNMENT).tasks for part, p in t.points.items()}


def _report(student: str, record: dict) -> Report:
    tests = [Row(name, name.split(":")[0], score, MAX[name], status, message, "visible")
             for name, score, status, message in record["tests"]]  # fmt: skip
    return Report(student, ASSIGNMENT, record["status"], record["message"], tests)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The results folder of a class: every recorded 01 submission, wrong ones and attacks."""
    out = tmp_path_factory.mktemp("graded")
    prefixes = (f"{ASSIGNMENT}/process/", "adversarial/")
    reports = [_report(key.replace("/", "-"), r) for key, r in records().items() if key.startswith(prefixes)]
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
    ring = next(p for p in report.parts if p.name == "ring_all_gather: collectives")
    kept = [
        json.loads((graded / r["student_id"] / "results.json").read_text()) for r in rows if r["status"] == "graded"
    ]
    assert ring.passed == sum(t["score"] == t["max_score"] for k in kept for t in k["tests"] if t["name"] == ring.name)
    assert ring.discrimination is not None and -1 <= ring.discrimination <= 1


def test_reasons_are_counted_once_per_student_and_part_with_an_example(graded):
    report = summarise(ASSIGNMENT, read_reports(graded, ASSIGNMENT))
    said = [t for r in read_reports(graded, ASSIGNMENT) if r.status == "graded" for t in r.tests
            if t.name == "ring_all_gather: collectives" and "contains all-gather" in t.message]  # fmt: skip
    forbidden = next(r for r in report.reasons if r.kind == "forbidden collective: all_gather"
                     and r.part == "ring_all_gather: collectives")  # fmt: skip
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
    argv = [sys.executable, "-m", "autograder.cli", "report", ASSIGNMENT, "--out", str(graded)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "look at first:" in done.stdout and (graded / "report.html").stat().st_size > 5000
    data = json.loads(subprocess.run([*argv, "--json"], capture_output=True, text=True, cwd=tmp_path).stdout)
    assert data["students"] == len(list(graded.glob("*/results.json"))) and data["first_look"]["students"] >= 2


def test_no_results_says_what_to_run(tmp_path):
    with pytest.raises(NoResults, match="run jaxcourse grade 01_collectives first"):
        read_reports(tmp_path, ASSIGNMENT)
