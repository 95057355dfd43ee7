"""A ring's picture, from its compiled program: steps across, devices down, an arrow per send. A
right ring's arrows all go to a neighbour; a ring that sends past its neighbours shows each such
arrow in red. Drawn in check()'s table, the feedback and probe(), and rendered by a real browser."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import pytest

from autograder.checks import probe
from autograder.core.records import TestResult
from autograder.grading.reports.feedback import to_html
from autograder.grading.reports.figures import svg
from autograder.grading.student.self_check import find_task
from autograder.grading.submission.report import Report
from autograder.specs.given import pipeline_experts
from autograder.trusted import explain

from ..helpers.course import reference_sources
from ..helpers.images import chromium_or_skip
from ..helpers.submissions import wrong_submission

SVG = "{http://www.w3.org/2000/svg}"


def _function(assignment: str, task: str, wrong: str | None = None, given=None):
    """A reference function, or ``wrong``'s, with the names its notebook gives it."""
    namespace = {"jax": jax, "jnp": jnp, **({k: v for k, v in vars(given).items() if k[0] != "_"} if given else {})}
    exec("\n".join(reference_sources(assignment).values()), namespace)
    if wrong is not None:
        exec(wrong_submission(assignment, wrong).functions[task], namespace)
    return namespace[task]


def _arrows(picture: str) -> dict[str, int]:
    lines = ET.fromstring(picture).iter(f"{SVG}line")
    found = [line.get("class") for line in lines if line.get("class")]
    return {kind: found.count(kind) for kind in ("near", "far")}


def test_a_right_ring_sends_to_a_neighbour_at_each_of_its_seven_steps():
    ring = probe(_function("01_collectives", "ring_all_gather")).ring
    assert ring is not None and len(ring["steps"]) == 7 and ring["far"] == []
    assert all(sorted(pairs) == [[i, (i + 1) % 8] for i in range(8)] for pairs in ring["steps"])
    assert _arrows(svg(ring)) == {"near": 56, "far": 0}


def test_a_ring_that_sends_past_its_neighbours_shows_each_such_arrow_in_red():
    ring = probe(_function("01_collectives", "ring_all_gather", "ring_direct_sends")).ring
    assert ring is not None and ring["far"]
    picture = svg(ring)
    assert _arrows(picture)["far"] == len(ring["far"]) > 0
    assert f"a send past a neighbour, in red ({len(ring['far'])} of them)" in picture
    step, source, target = ring["far"][0]
    assert f"step {step + 1}: device {source} sends to device {target}, past its neighbours" in picture


def test_a_pipeline_passes_its_activations_one_stage_on():
    ring = probe(_function("06_pipeline_experts", "gpipe", given=pipeline_experts)).ring
    assert ring is not None and ring["far"] == [] and len(ring["steps"]) > 1


def _labels(picture: str) -> list[str]:
    return [text.text or "" for text in ET.fromstring(picture).iter(f"{SVG}text") if text.get("class") == "carried"]


def test_each_arrow_says_whose_block_it_carries_so_forwarding_differs_from_sending_one_s_own():
    right = probe(_function("01_collectives", "ring_all_gather")).ring
    wrong = probe(_function("01_collectives", "ring_all_gather", "ring_direct_sends")).ring
    assert right is not None and wrong is not None
    assert right["carried"] == [[[(s - k) % 8] for s, _ in pairs] for k, pairs in enumerate(right["steps"])]
    assert wrong["carried"] == [[[s] for s, _ in pairs] for pairs in wrong["steps"]]
    # device d's cell after step 2 holds what d - 1 received at step 1: d - 2's block
    assert _labels(svg(right))[8:16] == [str((d - 2) % 8) for d in range(8)]


def test_a_collective_matmul_multiplies_each_block_in_the_step_it_arrives():
    ring = probe(_function("02_sharded_matmul", "collective_matmul_allgather")).ring
    assert ring is not None and len(ring["steps"]) == 7
    assert ring["computes"] == [[sorted({d, (d - k) % 8}) for d in range(8)] for k in range(8)]
    squares = [r for r in ET.fromstring(svg(ring)).iter(f"{SVG}rect") if r.get("class") == "matmul"]
    assert len(squares) == 64
    assert "after step 3: device 5 runs a matmul on the inputs of devices 2, 5" in svg(ring)


def test_the_experts_exchange_is_drawn_from_its_two_all_to_alls_in_the_feedback():
    moe = probe(_function("06_pipeline_experts", "moe_layer", given=pipeline_experts)).ring
    assert moe is not None and moe["kinds"] == ["all-to-all", "all-to-all"] and moe["far"] == []
    assert all(len(pairs) == 56 for pairs in moe["steps"])
    assert moe["carried"][0] == [[s] for s, _ in moe["steps"][0]]  # each device's tokens, to each expert
    assert moe["computes"][1] == [list(range(8))] * 8  # each expert multiplies tokens from every device
    picture = svg(moe)
    assert "each device sends a piece to every other" in picture and _arrows(picture) == {"near": 0, "far": 0}
    assert _labels(picture)[:8] == [f"all but {d}" for d in range(8)]  # each receives from every other


def test_the_experts_technique_part_is_explained_by_their_exchange():
    moe_layer = find_task("moe_layer")[1]
    case = moe_layer.cases[0]
    census = {
        "timeline": {
            "kinds": ["all-to-all"],
            "steps": [[[0, 1], [1, 0]]],
            "carried": [[[0], [1]]],
            "computes": [[None, None], [[0, 1], [0, 1]]],
        }
    }
    measured = [(case, {"values": {"ok": True}, "census": census})]
    figure = explain.figure(moe_layer, "technique", measured, measured)  # type: ignore[arg-type]
    assert figure is not None and figure["kind"] == "ring" and figure["kinds"] == ["all-to-all"]


def test_a_figure_from_an_older_results_file_still_draws():
    picture = svg({"kind": "ring", "devices": 2, "steps": [[[0, 1]], [[1, 0]]], "far": [], "case": "old"})
    assert _arrows(picture) == {"near": 2, "far": 0} and _labels(picture) == []


def test_the_picture_is_in_the_feedback_and_in_probe_s_notebook_view():
    wrong = probe(_function("01_collectives", "ring_all_gather", "ring_direct_sends"))
    test = TestResult("ring_all_gather: technique", "t", 0.0, 3.0, "failed", "sends past", "visible", wrong.ring)
    page = to_html(Report("ada", "01_collectives", "graded", "", [test]))
    assert 'class="far"' in page and 'class="far"' in wrong._repr_html_()


def test_every_label_of_the_picture_is_escaped():
    picture = svg({"kind": "ring", "devices": 2, "steps": [[[0, 1]]], "far": [], "case": "<script>"})
    ET.fromstring(picture)
    assert "<script>" not in picture


@pytest.fixture(scope="module")
def pictures(tmp_path_factory):
    """One right ring, one wrong ring and one pipeline, on one page."""
    rings = {
        "right": probe(_function("01_collectives", "ring_all_gather")).ring,
        "wrong": probe(_function("01_collectives", "ring_all_gather", "ring_direct_sends")).ring,
        "pipeline": probe(_function("06_pipeline_experts", "gpipe", given=pipeline_experts)).ring,
        "experts": probe(_function("06_pipeline_experts", "moe_layer", given=pipeline_experts)).ring,
    }
    page = tmp_path_factory.mktemp("pictures") / "rings.html"
    page.write_text(
        "<html><body>" + "".join(f"<div id='{k}'>{svg(r)}</div>" for k, r in rings.items()) + "</body></html>"
    )
    return page


def test_a_browser_draws_every_arrow_and_the_wrong_ones_in_red(pictures):
    chromium_or_skip()
    from ..helpers.browser import chromium

    drawn = (
        "Object.fromEntries(['right', 'wrong', 'pipeline'].map(id => [id, Array.from("
        "document.querySelectorAll(`#${id} line[class]`)).map(l => [l.getAttribute('class'), "
        "getComputedStyle(l).stroke, l.getBoundingClientRect().width > 0])]))"
    )
    shown = (
        "Object.fromEntries(['right', 'wrong', 'pipeline', 'experts'].map(id => [id, ['text.carried', "
        "'rect.matmul', 'line.exchange'].map(q => Array.from(document.querySelectorAll(`#${id} ${q}`))"
        ".filter(e => e.getBoundingClientRect().width > 0).length)]))"
    )
    with chromium(pictures.as_uri()) as page:
        found = page.wait_for(f"document.querySelectorAll('svg').length === 4 && {drawn}", "the four pictures")
        labels = page.wait_for(shown, "the labels, matmuls and exchanges")
    assert {kind for kind, _, _ in found["right"]} == {"near"} and len(found["right"]) == 56
    assert all(shown for _, _, shown in found["right"] + found["wrong"] + found["pipeline"])
    red = {colour for kind, colour, _ in found["wrong"] if kind == "far"}
    assert red == {"rgb(207, 34, 46)"} and any(kind == "near" for kind, _, _ in found["wrong"])
    assert {kind for kind, _, _ in found["pipeline"]} == {"near"}
    # [arrow labels, matmul squares, all-to-all lines] each picture shows
    assert labels["right"] == labels["wrong"] == [56, 0, 0]
    assert labels["pipeline"][0] == len(found["pipeline"]) and labels["pipeline"][1] > 0
    # each device's cell after each all-to-all; the experts and the combining multiply: 8 devices each
    assert labels["experts"] == [16, 24, 112]
