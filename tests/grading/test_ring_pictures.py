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
from autograder.grading.feedback import to_html
from autograder.grading.figures import svg
from autograder.grading.report import Report
from autograder.specs.given import pipeline_experts

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
    assert _arrows(picture)["far"] == len(ring["far"]) > 0 and "past a neighbour, in red" in picture
    step, source, target = ring["far"][0]
    assert f"step {step + 1}: device {source} sends to device {target}, past its neighbours" in picture


def test_a_pipeline_passes_its_activations_one_stage_on():
    ring = probe(_function("06_pipeline_experts", "gpipe", given=pipeline_experts)).ring
    assert ring is not None and ring["far"] == [] and len(ring["steps"]) > 1


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
    with chromium(pictures.as_uri()) as page:
        found = page.wait_for(f"document.querySelectorAll('svg').length === 3 && {drawn}", "the three pictures")
    assert {kind for kind, _, _ in found["right"]} == {"near"} and len(found["right"]) == 56
    assert all(shown for _, _, shown in found["right"] + found["wrong"] + found["pipeline"])
    red = {colour for kind, colour, _ in found["wrong"] if kind == "far"}
    assert red == {"rgb(207, 34, 46)"} and any(kind == "near" for kind, _, _ in found["wrong"])
    assert {kind for kind, _, _ in found["pipeline"]} == {"near"}
