"""One student's whole path in a real browser (Playwright driving Debian's chromium): log in, open
the Assignments panel, fetch 01_collectives, edit a solution cell, save, submit, and read the
feedback the grading service sent back. A screenshot of each step is kept under
``build/test-artifacts/hub-browser/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ...helpers.course import ASSIGNMENT, full_marks, reference_sources, total
from ...helpers.hub import SHOTS

pytestmark = [pytest.mark.docker, pytest.mark.slow]
EDITED = "local_shape"  # the solution cell the student edits in the browser


class Steps:
    """Numbered screenshots: the artifact shows where a failing run stopped."""

    def __init__(self, page) -> None:
        self.page, self.number = page, 0

    def shot(self, name: str) -> Path:
        self.number += 1
        path = SHOTS / f"{self.number:02d}-{name}.png"
        self.page.screenshot(path=str(path))
        return path


def _assignment_list(page):
    """nbgrader's Assignments panel, in front (another tab, the start page say, may have taken it)."""
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Assignments")
    if tab.count():
        tab.first.click()
    else:
        page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
        page.get_by_role("menuitem", name="Assignment List").click()
    return page.locator("#nbgrader-assignment-list")


def test_a_student_submits_from_the_browser_and_reads_her_feedback(hub, page):
    user = hub["users"]["carol"]
    steps = Steps(page)
    page.goto(f"{user.hub}/hub/login")
    page.fill("input[name=username]", user.name)
    page.fill("input[name=password]", user.password)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(re.compile(rf"/user/{user.name}/lab"), timeout=240_000)
    page.wait_for_selector(".jp-FileBrowser", state="visible")
    # The start page opens first, rendered, and says where to begin.
    page.locator(".jp-RenderedMarkdown h1", has_text="Distributed computing in JAX: start here").wait_for()
    steps.shot("logged-in")

    panel = _assignment_list(page)
    panel.locator("#released_assignments_list").get_by_text(ASSIGNMENT).first.wait_for()
    steps.shot("assignments-panel")
    panel.locator("#released_assignments_list").get_by_role("button", name="Fetch").first.click()
    panel.locator("#fetched_assignments_list").get_by_text(ASSIGNMENT).first.wait_for()
    steps.shot("fetched")

    page.goto(f"{user.hub}/user/{user.name}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")
    cell = page.locator(".jp-CodeCell", has_text=f"def {EDITED}").first
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(reference_sources()[EDITED])
    steps.shot("edited")
    page.keyboard.press("Control+s")
    page.get_by_text("Saving completed").or_(page.locator(".jp-mod-dirty")).first.wait_for(state="attached")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')")
    saved = (hub["classdir"] / "home" / user.name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    assert "raise NotImplementedError" in saved and reference_sources()[EDITED].splitlines()[0] in saved
    steps.shot("saved")

    panel = _assignment_list(page)
    panel.locator("#fetched_assignments_list").get_by_role("button", name="Submit").first.click()
    panel.locator("#submitted_assignments_list").get_by_text(ASSIGNMENT).first.wait_for()
    steps.shot("submitted")

    submitted = panel.locator("#submitted_assignments_list")
    for _ in range(100):  # the grading service grades it; the panel then says feedback is there
        if submitted.get_by_text("feedback available to fetch").count():
            break
        _assignment_list(page).locator("#refresh_assignments_list").click()  # the panel's own refresh button
        page.wait_for_timeout(2000)  # looked at right after the click, the list is still reloading
    steps.shot("feedback-available")
    submitted = _assignment_list(page).locator("#submitted_assignments_list")
    submitted.get_by_role("button", name="Fetch Feedback").first.click()
    submitted.get_by_text("view feedback").first.click()  # the file browser goes to the feedback
    page.locator(".jp-DirListing-item", has_text=f"{ASSIGNMENT}.html").first.dblclick()
    viewer = page.frame_locator("iframe").first
    viewer.get_by_text(f"{ASSIGNMENT}: feedback for {user.name}").wait_for()
    steps.shot("feedback")
    text = viewer.locator("body").inner_text()
    # Only the edited function is solved: its points, and nothing for the others.
    earned = sum(points for test, points in full_marks(ASSIGNMENT).items() if test.startswith(f"{EDITED}:"))
    assert f"Score: {earned:g} / {total(ASSIGNMENT):g}" in text, text[:2000]
    assert re.search(rf"{EDITED}: values\s+\S+\s+passed", text), text[:2000]
