"""What ``check()`` shows, measured in a real browser: every wrong submission of 01 and 05 whose
file holds an array program (and every reference of theirs), and the other parts that pass blocks
on (02's collective matmuls, 06's pipeline and experts, 07's split-cache combine, right and wrong), judged in this process as a
notebook's ``check(fn)`` judges it, drawn on one page by Debian's chromium. Each verdict has its
table with a row per part; in each picture every label lies inside its picture, apart from every
other label, crossed by no arrow, and at 11 px or more. The page is kept, as a screenshot, under
build/test-artifacts/verdicts/."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from autograder.grading.reports import signature_view
from autograder.grading.student.self_check import CheckResult, find_task, judge
from autograder.specs import get
from autograder.specs.given import inference, pipeline_experts, transformer_parallel

from ..helpers.course import REPO, reference_sources
from ..helpers.engine import unavailable
from ..helpers.hub import CHROMIUM_FLAGS
from ..helpers.images import chromium_or_skip
from ..helpers.submissions import WrongSubmission, wrong_submissions

pytestmark = pytest.mark.slow  # 46 functions judged, one browser: about 40 s

SHOTS = REPO / "build" / "test-artifacts" / "verdicts"
GIVEN = {"01_collectives": None, "05_transformer_parallel": transformer_parallel}
# Beyond 01 and 05, every other part that passes blocks on (collective matmuls, pipelines,
# experts): its reference and the wrong submissions named here.
BLOCKS = {
    "02_sharded_matmul": (None, {"collective_matmul_feigns_overlap", "collective_matmul_direct_sends"}),
    "06_pipeline_experts": (pipeline_experts, {"gpipe_skips_neighbours", "moe_sends_every_token"}),
    "07_inference": (inference, {"split_gathers_cache", "split_no_rescale"}),
}
# Function-level wrong answers that never return in this process (the grader stops them by the
# clock, in a sandbox or a worker; an in-process judge would wait for ever).
NEVER_RETURN = {"01_collectives": {"infinite_loop_in_function", "program_never_ends"}}
SMALLEST_FONT_PX = 11.0
TOUCH_PX = 0.5  # boxes that share an edge, or a line that ends on one, within rounding, do not collide


@dataclass(frozen=True)
class Case:
    """One function to judge: a reference's (``submission`` None) or a wrong submission's."""

    assignment: str
    task: str
    submission: WrongSubmission | None

    @property
    def id(self) -> str:
        return f"{self.assignment}-{self.submission.name if self.submission else 'reference'}-{self.task}"


def _cases() -> list[Case]:
    """Every reference and every gradable wrong submission's array program, of 01 and 05."""
    cases = []
    for assignment in GIVEN:
        tasks = {t.name: t for t in get(assignment).tasks if t.kind != "python"}
        cases += [Case(assignment, name, None) for name in reference_sources(assignment) if name in tasks]
        for wrong in wrong_submissions(assignment):
            if wrong.status != "graded" or wrong.name in NEVER_RETURN.get(assignment, ()):
                continue  # a notebook that cannot be graded, or a function that never returns
            cases += [Case(assignment, name, wrong) for name in wrong.functions if name in tasks]
    for assignment, (_, named) in BLOCKS.items():
        tasks = {t.name for t in get(assignment).tasks if t.draws_steps}
        cases += [Case(assignment, name, None) for name in reference_sources(assignment) if name in tasks]
        for wrong in wrong_submissions(assignment):
            if wrong.name in named:
                cases += [Case(assignment, name, wrong) for name in wrong.functions if name in tasks]
    return cases


CASES = _cases()


def _function(case: Case):
    """The function as its notebook defines it: the references' cell, then the wrong one's."""
    given = GIVEN[case.assignment] if case.assignment in GIVEN else BLOCKS[case.assignment][0]
    namespace = {"jax": jax, "jnp": jnp, **({k: v for k, v in vars(given).items() if k[0] != "_"} if given else {})}
    exec("\n".join(reference_sources(case.assignment).values()), namespace)
    if case.submission is not None:
        exec(case.submission.functions[case.task], namespace)
    return namespace[case.task]


# ---------------------------------------------------------------- geometry, in screen pixels

Box = dict[str, float]  # x, y, width, height, as getBoundingClientRect gives them


def _inside(inner: Box, outer: Box) -> bool:
    return (
        inner["x"] >= outer["x"] - TOUCH_PX
        and inner["y"] >= outer["y"] - TOUCH_PX
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + TOUCH_PX
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + TOUCH_PX
    )


def _overlap(a: Box, b: Box) -> bool:
    across = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    down = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return across > TOUCH_PX and down > TOUCH_PX


def crosses(start: tuple[float, float], end: tuple[float, float], box: Box) -> bool:
    """Whether the segment from ``start`` to ``end`` passes through ``box`` (shrunk by TOUCH_PX
    on each side): Liang-Barsky clipping of the segment itself, not of its bounding box."""
    left, top = box["x"] + TOUCH_PX, box["y"] + TOUCH_PX
    right, bottom = box["x"] + box["width"] - TOUCH_PX, box["y"] + box["height"] - TOUCH_PX
    if right <= left or bottom <= top:
        return False
    (x0, y0), (x1, y1) = start, end
    dx, dy = x1 - x0, y1 - y0
    low, high = 0.0, 1.0
    for p, q in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)):
        if p == 0:
            if q < 0:
                return False  # parallel to this edge and outside it
            continue
        t = q / p
        if p < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low > high:
            return False
    return True


def _said(text: dict[str, Any]) -> str:
    return f"{text['text'][:60]!r} at ({text['box']['x']:.0f}, {text['box']['y']:.0f})"


def problems(picture: dict[str, Any]) -> list[str]:
    """What is wrong with one drawn SVG: labels outside it, on each other, under a line, too small."""
    found = []
    texts, lines = picture["texts"], picture["lines"]
    for text in texts:
        if not _inside(text["box"], picture["box"]):
            found.append(f"{_said(text)} ({text['box']}) is not inside its svg ({picture['box']})")
        if text["size"] < SMALLEST_FONT_PX or text["size"] * text["scale"] < SMALLEST_FONT_PX:
            found.append(f"{_said(text)} is {text['size']:g}px, drawn at x{text['scale']:.2f}: under 11px")
    for i, a in enumerate(texts):
        found += [f"{_said(a)} overlaps {_said(b)}" for b in texts[i + 1 :] if _overlap(a["box"], b["box"])]
    for line in lines:
        for text in texts:
            if crosses(line["from"], line["to"], text["box"]):
                start, end = (f"({x:.0f}, {y:.0f})" for x, y in (line["from"], line["to"]))
                found.append(f"the line {line['what']!r} from {start} to {end} crosses {_said(text)}")
    return found


# What the browser reads: per case, the verdict table's rows, the signature tables, and every
# top-level svg's box, its texts (box, computed font size, the scale they are drawn at) and its
# lines' ends, all in the viewport's pixels.
MEASURE = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  const scale = e => { const m = e.getScreenCTM(); return Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)); };
  const at = (m, x, y) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; };
  return Object.fromEntries(Array.from(document.querySelectorAll('section[data-case]')).map(s => [s.dataset.case, {
    verdict: Array.from(s.querySelectorAll('table.verdict tr')).map(
      tr => Array.from(tr.cells).map(c => c.textContent.trim())),
    signatures: s.querySelectorAll('table.signature').length,
    svgs: Array.from(s.querySelectorAll('svg')).filter(g => !g.parentElement.closest('svg')).map(g => ({
      box: box(g),
      texts: Array.from(g.querySelectorAll('text')).filter(t => t.textContent.trim()).map(t => ({
        text: t.textContent.trim(), box: box(t), size: parseFloat(getComputedStyle(t).fontSize), scale: scale(t)})),
      lines: Array.from(g.querySelectorAll('line')).map(l => {
        const m = l.getScreenCTM();
        return {
          from: at(m, l.x1.baseVal.value, l.y1.baseVal.value), to: at(m, l.x2.baseVal.value, l.y2.baseVal.value),
          box: box(l), what: (l.querySelector('title') || l).textContent.trim() || l.getAttribute('class') || 'line'};
      }),
    })),
  }]));
}"""

# A picture with every fault the checks look for, drawn on the same page: each must be found.
CONTROL = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="120">'
    '<text x="10" y="20" font-size="12">fits</text>'
    '<text x="250" y="20" font-size="12">runs off the edge</text>'
    '<text x="10" y="60" font-size="12">under</text><text x="20" y="62" font-size="12">another</text>'
    '<text x="150" y="100" font-size="9">tiny</text>'
    '<text x="120" y="60" font-size="12">crossed</text>'
    '<line x1="110" y1="40" x2="200" y2="65" stroke="black"><title>through crossed</title></line>'
    # its bounding box holds "fits", but the segment passes below and right of it
    '<line x1="70" y1="8" x2="8" y2="40" stroke="black"><title>beside fits</title></line>'
    "</svg>"
)


def _page(verdicts: dict[str, CheckResult]) -> str:
    sections = "".join(
        f"<section data-case='{html.escape(name)}'><h2>{html.escape(name)}</h2>{result._repr_html_()}</section>"
        for name, result in verdicts.items()
    )
    control = f"<section data-case='control'><h2>control: every fault</h2>{CONTROL}</section>"
    return f"<!doctype html><html><head><meta charset='utf-8'></head><body>{sections}{control}</body></html>"


@pytest.fixture(scope="module")
def verdicts() -> dict[str, CheckResult]:
    """Each case's verdict, judged in this process as check(fn) judges it."""
    return {case.id: judge(_function(case)) for case in CASES}


@pytest.fixture(scope="module")
def drawn(request, tmp_path_factory) -> dict[str, Any]:
    """Every verdict on one page in one chromium: what MEASURE reads, by case."""
    chromium = chromium_or_skip()  # before judging: without a browser there is nothing to measure
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        unavailable("Playwright", str(err))
    verdicts = request.getfixturevalue("verdicts")
    page_file = tmp_path_factory.mktemp("verdicts") / "verdicts.html"
    page_file.write_text(_page(verdicts))
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")
            measured = page.evaluate(MEASURE)
            page.screenshot(path=str(SHOTS / "verdicts.png"), full_page=True)
        finally:
            browser.close()
    return measured


def test_the_cases_are_every_array_program_of_01_and_05():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) > 30
    assert {c.task for c in CASES if c.submission is None and c.assignment in GIVEN} == {
        "ring_all_gather",
        "ring_reduce_scatter",
        "ring_all_reduce",
        "sharded_layernorm",
        "fold_rng_over_axis",
        "explicit_step",
        "ring_attention",
        "sequence_parallel_block",
    }
    assert "01_collectives-ring_direct_sends-ring_all_gather" in ids
    others = {c.task for c in CASES if c.assignment in BLOCKS}
    assert {
        "collective_matmul_allgather",
        "collective_matmul_reduce_scatter",
        "gpipe",
        "moe_layer",
        "split_cache_decode",
    } <= others
    assert not any(c.submission and c.submission.name in ("kills_its_process", "raises_at_import") for c in CASES)


def test_the_measurement_finds_every_fault_of_the_control_picture(drawn):
    (picture,) = drawn["control"]["svgs"]
    found = problems(picture)
    assert len(found) == 4, found
    assert any("'runs off the edge'" in p and "not inside" in p for p in found), found
    assert any("'under'" in p and "overlaps" in p and "'another'" in p for p in found), found
    assert any("'tiny'" in p and "9px" in p for p in found), found
    assert any("'through crossed'" in p and "crosses 'crossed'" in p for p in found), found
    assert not any("beside fits" in p for p in found), found
    beside = next(line for line in picture["lines"] if line["what"] == "beside fits")
    fits = next(text for text in picture["texts"] if text["text"] == "fits")
    assert _inside(fits["box"], beside["box"]), "the control's line must hold the label in its bounding box"


def test_a_segment_crosses_a_box_only_where_it_passes_through_it():
    box = {"x": 10.0, "y": 10.0, "width": 20.0, "height": 10.0}
    assert crosses((0, 15), (40, 15), box)  # straight through
    assert crosses((15, 12), (16, 13), box)  # wholly inside
    assert not crosses((0, 0), (40, 5), box)  # above it
    assert not crosses((35, 0), (0, 9.8), box)  # its bounding box holds the box; the segment misses it
    assert not crosses((0, 20), (40, 20), box)  # along an edge: touching, not crossing
    assert not crosses((0, 15), (10.2, 15), box)  # ends on an edge


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_verdict_table_has_a_row_for_every_part(case, drawn, verdicts):
    result, shown = verdicts[case.id], drawn[case.id]
    parts = [p for p in find_task(case.task)[1].points if p != "hidden values"]  # check() runs the visible cases
    assert [t.name for t in result.tests] == [f"{case.task}: {p}" for p in parts]
    rows = [row for row in shown["verdict"] if row and row[0] in {f"{case.task}: {p}" for p in parts} | set(parts)]
    assert len(rows) == len(parts), f"the verdict table (table.verdict) shows {shown['verdict']}"
    for test, row in zip(result.tests, rows):
        assert row[0].endswith(test.name.split(": ")[1]), (row, test.name)
        said = " ".join(row[1:])
        assert f"{test.score:g}/{test.max_score:g}" in said and test.status in said, (row, test)
        assert test.message.strip() in said, (row, test.message)
    assert shown["signatures"] == len(signature_view.tables(result.tests))
    pictures = [t.figure["kind"] for t in result.tests if t.figure and t.visibility == "visible"]
    assert len(shown["svgs"]) == len(pictures), (pictures, len(shown["svgs"]))
    technique = next((t for t in result.tests if t.name.endswith(": technique")), None)
    if technique and find_task(case.task)[1].draws_steps and result.tests[0].status == "passed":
        assert technique.figure and technique.figure["kind"] == "ring", technique  # each device's steps


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_label_is_inside_its_picture_apart_uncrossed_and_readable(case, drawn):
    for picture in drawn[case.id]["svgs"]:
        assert picture["texts"], f"an svg without a label: {picture['box']}"
        for line in picture["lines"]:  # the ends measured are the line's own: its box spans them
            xs, ys = sorted((line["from"][0], line["to"][0])), sorted((line["from"][1], line["to"][1]))
            assert math.isclose(line["box"]["x"], xs[0], abs_tol=1.5) and math.isclose(
                line["box"]["y"], ys[0], abs_tol=1.5
            ), line
        assert problems(picture) == []
