"""Feedback pages: points, status and reason per test, pictures where they help, and hidden
tests by name and verdict only."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from autograder.core.records import TestResult as Result
from autograder.grading.reports.feedback import markdown, to_html
from autograder.grading.reports.figures import blocks, svg
from autograder.grading.submission.report import Report

MESH = {"x": 2, "y": 4}


def test_blocks_follow_the_spec_in_mesh_order():
    assert blocks(MESH, ["x"], 2) == {(0, 0): [0, 1, 2, 3], (1, 0): [4, 5, 6, 7]}
    assert blocks(MESH, [None, "y"], 2) == {(0, i): [i, i + 4] for i in range(4)}
    assert blocks(MESH, [["x", "y"]], 1) == {(i,): [i] for i in range(8)}
    assert blocks(MESH, [], 2) == {(0, 0): list(range(8))}


def test_traffic_figure_draws_sent_minimum_and_reference():
    picture = svg(
        {
            "kind": "traffic",
            "unit": "bytes",
            "sent": 3584,
            "minimum": 1792,
            "reference": 1792,
            "case": "mesh 8:i, float32 <script>",
        }
    )
    ET.fromstring(picture)  # well-formed, so the label was escaped
    assert "3.58 kB" in picture and "1.79 kB" in picture and "the reference" in picture
    assert "<script>" not in picture


def test_memory_figure_draws_each_leaf_against_its_share():
    picture = svg(
        {
            "kind": "memory",
            "case": "mesh 8:data <b>",
            "leaves": [["params/w1", 256, 256.0], ["opt_state/mu/w1", 2048, 256.0]],
        }
    )
    ET.fromstring(picture)  # well-formed, so the labels were escaped
    assert "opt_state/mu/w1" in picture and "2.05 kB" in picture and picture.count(">256 B<") == 3
    assert picture.count('fill="#cf222e"') == 1  # only the leaf held whole is red
    assert "<b>" not in picture


def test_sharding_figure_shows_a_copy_per_device_for_a_varying_result():
    picture = svg({"kind": "sharding", "mesh": {"i": 4}, "shape": [8, 8], "expected": [], "varying": ["i"]})
    ET.fromstring(picture)
    assert "asked for: P()" in picture and "a different value along &#x27;i&#x27;" in picture
    assert all(f">dev {d}<" in picture for d in range(4))  # each device's own copy
    assert ">dev 0,1,2,3<" in picture  # the one replicated block asked for


def _report() -> Report:
    traffic = {"kind": "traffic", "unit": "values", "sent": 14, "minimum": 7, "reference": 7, "case": "mesh 8:i"}
    tests = [
        Result("ring: communication", "t", 0, 2, "failed", "sends 14 values per device", "visible", traffic),
        Result("ring: hidden values", "t", 0, 2, "failed", "mesh 4x2:x,y, axis 'x', bfloat16: wrong", "hidden"),
    ]
    return Report("ada", "01_collectives", "graded", "", tests)


def test_feedback_pictures_visible_tests_and_hides_hidden_cases():
    page = to_html(_report())
    assert page.count("<svg") == 1 and "14 values" in page
    for text in (page, markdown(_report())):
        assert "sends 14 values per device" in text
        assert "4x2" not in text and "bfloat16" not in text  # the hidden case stays hidden
        assert "a hidden case fails" in text


def test_a_plain_python_part_s_hidden_failure_says_what_its_cases_change_not_which_mesh():
    hidden = Result(
        "bubble_fraction: hidden values",
        "test_bubble_fraction",
        0,
        4,
        "failed",
        "(8, 3, 4): returned 0.5, expected 0.647",
        "hidden",
    )
    for text in (markdown(report := Report("ada", "06_pipeline_experts", "graded", "", [hidden])), to_html(report)):
        assert "stage, micro-batch and chunk counts" in text
        assert "meshes" not in text and "0.647" not in text and "(8, 3, 4)" not in text


def test_feedback_shows_the_technique_s_signature_beside_the_reference_s_and_escapes_it():
    signature = {
        "case": "mesh 8:i <i>",
        "rows": [
            {
                "dimension": "memory at the peak",
                "yours": 78720,
                "reference": 39940,
                "bounds": {"technique": 1.5},
            },
            {
                "dimension": "bytes sent over 'i'",
                "yours": 1792.0,
                "reference": 1792.0,
                "bounds": {"technique": 1.5, "communication": 1.0},
            },
            {"dimension": "FLOPs of matmuls", "yours": 0.0, "reference": 0.0, "bounds": {}},
        ],
    }
    tests = [Result("ring: technique", "t", 0, 4, "failed", "needs 1.97x", "visible", None, signature)]
    report = Report("ada", "05_transformer_parallel", "graded", "", tests)
    page, text = to_html(report), markdown(report)
    table = page[page.index("<table class='signature'>") : page.index("</table>", page.index("class='signature'"))]
    assert "<td>78.7 kB</td><td>39.9 kB</td><td>1.97x</td><td>1.5x (technique)</td>" in table  # with units
    assert "<td>1.79 kB</td><td>1.79 kB</td><td>1.00x</td>" in table and "<td>0 FLOP</td><td>0 FLOP</td>" in table
    assert "<td>1.5x (technique), 1x (communication)</td>" in table and "<td>not judged</td>" in table
    assert "mesh 8:i &lt;i&gt;" in page and "<i>" not in table
    row = next(line for line in text.splitlines() if line.startswith("  memory at the peak"))
    assert " ".join(row.split()) == "memory at the peak 78.7 kB 39.9 kB 1.97x 1.5x (technique)"
    assert "ring: technique, mesh 8:i <i>:" in text  # Markdown code block: shown as written
