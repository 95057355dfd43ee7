"""Copied work found in the programs: a class graded for real (process sandbox), then `jaxcourse
similar`. Two students with the same wrong ring, one of them renamed, reordered and commented, are
the pair their programs give; a third student who copied the renamed ring's text and turned it
round into a right ring (the reference's program: expected) is found by the text; two copies of
the reference (what much of this small class wrote), a right ring written another way and two
untouched stubs from the release are not."""

from __future__ import annotations

import json

import pytest

from autograder.core.program_shape import likeness
from autograder.grading.record import batch
from autograder.grading.reports.similarity import similar_pairs
from autograder.grading.submission.report import Report

from ..helpers.course import ASSIGNMENT, solved_notebook, write_submission
from ..helpers.hub import run_jaxcourse
from ..helpers.rings import ANOTHER_WAY
from ..helpers.submissions import wrong_submission

pytestmark = pytest.mark.slow

RENAMED = """def ring_all_gather(x, axis_name):
    # my own ring: each hop hands my latest block to the left
    size = jax.lax.axis_size(axis_name)
    have = x
    me = jax.lax.axis_index(axis_name)
    out = jnp.zeros((size,) + x.shape, x.dtype).at[me].set(x)
    towards = [(k, (k - 1) % size) for k in range(size)]
    for hop in range(1, size):
        have = jax.lax.ppermute(have, axis_name, towards)  # one hop
        out = out.at[(me - hop) % size].set(have)
    return out.reshape((size * x.shape[0],) + x.shape[1:])
"""
TURNED = RENAMED.replace("(k - 1) % size", "(k + 1) % size").replace("# one hop", "# pass it along")
STUB = "def ring_all_gather(x, axis_name):\n    raise NotImplementedError()\n"


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    root = tmp_path_factory.mktemp("similar")
    wrong = wrong_submission(ASSIGNMENT, "ring_wrong_direction").functions["ring_all_gather"]
    students = {
        "ana": wrong,
        "ben": RENAMED,
        "cat": ANOTHER_WAY,
        "dan": None,
        "eve": None,
        "fay": STUB,
        "gus": STUB,
        "hal": TURNED,
    }
    for student, source in students.items():
        nb = solved_notebook(course, {"ring_all_gather": source} if source else None)
        write_submission(root / "submitted", student, nb)
    batch.grade_class(ASSIGNMENT, course, root / "submitted", root / "out", jobs=2, progress=False, sandbox="process")
    return root


def _reports(root) -> list[Report]:
    return [Report.from_json(json.loads(p.read_text())) for p in sorted((root / "out").glob("*/results.json"))]


def test_grading_keeps_each_functions_program(graded):
    reports = {r.student: r for r in _reports(graded)}
    assert reports["dan"].programs == reports["eve"].programs  # two copies of the reference
    assert reports["ana"].programs["ring_all_gather"] == reports["ben"].programs["ring_all_gather"]
    assert "ring_all_gather" not in reports["fay"].programs  # the release's stub exports nothing
    assert likeness(reports["cat"].programs["ring_all_gather"], reports["dan"].programs["ring_all_gather"]) < 0.9


def test_the_same_wrong_ring_and_the_same_text_are_found_and_nothing_else(graded, course):
    done = run_jaxcourse(
        course.root, "similar", ASSIGNMENT, "--out", str(graded / "out"), "--submissions", str(graded / "submitted")
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # the course is released: its text is set aside
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 pairs of 8 graded students"), lines
    assert lines[1].startswith("ana  ben: ring_all_gather (the same program, "), lines[1]
    assert lines[2] == "ben  hal: ring_all_gather (text: 99% of ben's cell in hal's, 99% of hal's in ben's)", lines
    page = (graded / "out" / "similar.html").read_text()
    assert "# my own ring: each hop hands my latest block to the left" in page  # ben's cell, beside ana's
    assert "<h2>ana and ben</h2>" in page and "<h2>ben and hal</h2>" in page and page.count("<h2>") == 2
    copied = page.split("<h2>ben and hal</h2>")[1]
    assert copied.count("<mark>") >= 2 and "# pass it along" in copied  # the passages both wrote, on both sides


def test_a_program_much_of_the_class_shares_is_no_ones_in_particular():
    common, rare = ["a", "b"], ["c", "d"]
    reports = [Report(f"s{i}", ASSIGNMENT, "graded", "", programs={"f": common}) for i in range(4)]
    reports += [
        Report("x", ASSIGNMENT, "graded", "", programs={"f": rare}),
        Report("y", ASSIGNMENT, "graded", "", programs={"f": rare}),
    ]
    pairs = similar_pairs(reports, reference={"f": ["z"]})
    assert [p.students for p in pairs] == [("x", "y")]
