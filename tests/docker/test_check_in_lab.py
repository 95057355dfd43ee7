"""``check(fn)`` as a student meets it: `jaxcourse lab --local` serving JupyterLab, a notebook run
through the Run menu in Debian's chromium. A wrong ring all-gather (one that sends each block
straight to where it goes) shows the whole verdict (the
table of parts with their points, the signature tables, the picture) and then one line of error,
never a stack trace; a right one shows the same table with every point. The two outputs are kept
as screenshots under build/test-artifacts/check-in-lab/ (and, with JAXCOURSE_UPDATE_SCREENSHOTS=1,
as the documentation's docs/img/check-fails.png and check-passes.png).

The local lab needs no Docker engine: this runs wherever chromium is (under CI=true it must)."""

from __future__ import annotations

import os
import re
import shutil

import nbformat
import pytest

from ..helpers.course import ASSIGNMENT, REPO, reference_sources
from ..helpers.engine import unavailable
from ..helpers.hub import CHROMIUM_FLAGS
from ..helpers.images import chromium_or_skip
from ..helpers.local_lab import checkout_with_records, read_until_url, start, stop
from ..helpers.net import free_port
from ..helpers.submissions import wrong_submission

pytestmark = pytest.mark.slow

SHOTS = REPO / "build" / "test-artifacts" / "check-in-lab"
DOCS_IMG = REPO / "docs" / "img"
NOTEBOOK = "check_in_lab.ipynb"
SHOT_NAMES = ("check-fails.png", "check-passes.png")  # the wrong cell's output, the right one's
PARTS = {"values": 3, "technique": 3, "communication": 2}  # what check() judges of ring_all_gather

SETUP = "from autograder.mesh import use_devices\n\nuse_devices(8)\nfrom autograder.checks import check"
# A "ring" whose step k sends each device's own block k places on: right values, not a ring.
WRONG = (
    "import jax\nimport jax.numpy as jnp\n\n\n"
    + wrong_submission(ASSIGNMENT, "ring_direct_sends").functions["ring_all_gather"]
    + "\n\n\ncheck(ring_all_gather)"
)
RIGHT = (
    "import jax\nimport jax.numpy as jnp\n\n\n"
    + reference_sources(ASSIGNMENT)["ring_all_gather"]
    + "\n\n\ncheck(ring_all_gather)"
)


def _notebook() -> nbformat.NotebookNode:
    """Setup, the wrong function and its check, the right one and its check. The wrong cell is
    tagged ``raises-exception`` (JupyterLab's own tag) so that Run All goes on past its error."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell(WRONG, metadata={"tags": ["raises-exception"]}),
        nbformat.v4.new_code_cell(RIGHT),
    ]
    return nb


# Per code cell: its prompt ("[3]:" once run), its outputs' text, the verdict table's rows, the
# signature tables and svgs in its outputs, and its error outputs' text.
READ_CELLS = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell')).map(cell => ({
  prompt: (cell.querySelector('.jp-InputArea-prompt') || {textContent: ''}).textContent.trim(),
  verdict: Array.from(cell.querySelectorAll('.jp-OutputArea table.verdict tr')).map(
    tr => Array.from(tr.cells).map(c => c.textContent.trim())),
  signatures: cell.querySelectorAll('.jp-OutputArea table.signature').length,
  svgs: cell.querySelectorAll('.jp-OutputArea svg').length,
  arrows: ['near', 'far'].map(k => cell.querySelectorAll(`.jp-OutputArea svg line.${k}`).length),
  errors: Array.from(cell.querySelectorAll(
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')).map(e => e.innerText),
  text: (cell.querySelector('.jp-OutputArea') || {innerText: ''}).innerText,
}))"""
# The lab's defaults as the page reads them, the image's overrides (docker/lab/overrides.json) merged in.
NEWS = """token => fetch('/lab/api/settings/@jupyterlab/apputils-extension:notification?token=' + token)
  .then(r => r.json()).then(s => Object.fromEntries(['fetchNews', 'checkForUpdates'].map(k => [k, s.schema.properties[k].default])))"""
DONE = "cells => cells.length === 3 && cells.every(c => /^\\[\\d+\\]:$/.test(c.prompt))"


@pytest.fixture(scope="module")
def lab_run(tmp_path_factory):
    """The notebook run top to bottom in JupyterLab: what each cell shows, and its screenshots."""
    chromium = chromium_or_skip()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        unavailable("Playwright", str(err))
    root = tmp_path_factory.mktemp("check-in-lab")
    checkout = checkout_with_records(root, ASSIGNMENT)
    work = root / "work"
    work.mkdir()
    nbformat.write(_notebook(), work / NOTEBOOK)
    SHOTS.mkdir(parents=True, exist_ok=True)
    env = {
        "JAXCOURSE_ROOT": str(checkout),
        # JupyterLab's layout and settings of its own, not the user's: a fresh workspace each run
        # (the sidebar folded below is not restored folded next time) and nothing written to ~/.jupyter
        "JUPYTERLAB_WORKSPACES_DIR": str(root / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(root / "settings"),
    }
    proc = start(["lab", "--local", "--port", str(free_port()), "--work", str(work)], env)
    try:
        url, token, _ = read_until_url(proc, timeout=120)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 2400})
                page.goto(f"{url}/lab/tree/{NOTEBOOK}?token={token}")
                page.locator(".jp-NotebookPanel .jp-CodeCell").nth(2).wait_for(timeout=60_000)
                # the file browser folded away, as for a screenshot: the notebook gets the width
                page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
                page.locator("#jp-left-stack").wait_for(state="hidden", timeout=10_000)
                # the kernel must be up before Run All, or the run waits on a kernel dialog
                page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=60_000)
                page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
                page.wait_for_function(f"({DONE})(({READ_CELLS})())", timeout=120_000, polling=250)
                page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=30_000)
                cells = page.evaluate(READ_CELLS)
                news = page.evaluate(NEWS, token)
                outputs = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-Cell-outputWrapper")
                for name, cell in zip(SHOT_NAMES, (1, 2)):
                    outputs.nth(cell).screenshot(path=str(SHOTS / name))
            finally:
                browser.close()
    finally:
        code, rest = stop(proc)
    assert code == 0, rest
    if os.environ.get("JAXCOURSE_UPDATE_SCREENSHOTS") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        for name in SHOT_NAMES:
            shutil.copyfile(SHOTS / name, DOCS_IMG / name)
    return {"cells": cells, "news": news}


def _points(rows: list[list[str]]) -> dict[str, str]:
    """Part -> its points cell, from the verdict table's rows ("ring_all_gather: values" -> "3/3")."""
    return {row[0].split(": ")[-1]: row[1] for row in rows[1:] if len(row) > 1}


def test_every_cell_ran_through_the_run_menu(lab_run):
    setup, wrong, right = lab_run["cells"]
    assert [c["prompt"] for c in lab_run["cells"]] == ["[1]:", "[2]:", "[3]:"], lab_run
    assert "8" in setup["text"] and not setup["errors"], setup
    assert wrong["text"] and right["text"]


def test_a_failing_check_shows_the_whole_verdict(lab_run):
    wrong = lab_run["cells"][1]
    points = _points(wrong["verdict"])
    assert set(points) == set(PARTS), wrong["verdict"]
    assert points["values"] == "3/3" and points["technique"] == "0/3", wrong["verdict"]
    assert any("not its neighbours" in " ".join(row) for row in wrong["verdict"]), wrong["verdict"]
    assert wrong["signatures"] >= 1 and wrong["svgs"] >= 1, wrong
    assert wrong["arrows"][1] > 0, wrong  # each device's steps, its sends past a neighbour in red
    assert "the other 2 (hidden values" in wrong["text"] and "instructor's grading" in wrong["text"], wrong


def test_a_failing_check_s_error_is_one_line_without_a_traceback(lab_run):
    (error,) = lab_run["cells"][1]["errors"]
    lines = [line for line in error.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "CheckFailed" in lines[0] and "Traceback" not in error, error
    assert "ring_all_gather" in lines[0] and "Traceback" not in lab_run["cells"][1]["text"], error


def test_a_passing_check_shows_the_table_with_every_point(lab_run):
    right = lab_run["cells"][2]
    assert _points(right["verdict"]) == {part: f"{p}/{p}" for part, p in PARTS.items()}, right["verdict"]
    assert not right["errors"] and right["signatures"] >= 1 and right["svgs"] >= 1, right
    assert right["arrows"] == [56, 0], right  # 7 steps of 8 sends, each to a neighbour


def test_the_local_lab_has_the_image_s_settings_and_fetches_no_news(lab_run):
    assert lab_run["news"] == {"fetchNews": "false", "checkForUpdates": False}, lab_run["news"]


def test_both_outputs_are_kept_as_screenshots(lab_run):
    for name in SHOT_NAMES:
        assert (SHOTS / name).stat().st_size > 10_000, name
