"""A real browser (Debian's headless chromium) opens the lab with its token and finds the file
browser with the course in it and nbgrader's Assignments panel listing the release."""

from __future__ import annotations

import time

import pytest

from autograder.engine import images

from ..helpers.images import chromium_or_skip

pytestmark = pytest.mark.docker

FILES = "Array.from(document.querySelectorAll('.jp-FileBrowser .jp-DirListing-itemText')).map(e => e.textContent)"
MENU = "Array.from(document.querySelectorAll('.lm-MenuBar-itemLabel')).find(e => e.textContent === 'Nbgrader')"
ITEM = "Array.from(document.querySelectorAll('.lm-Menu-itemLabel')).find(e => e.textContent === 'Assignment List')"
RELEASED = "document.querySelector('#released_assignments_list')"


def _open_menu_item(page, menu: str, item: str, tries: int = 10) -> None:
    """Click a menu bar entry until its menu shows ``item`` (a first click may only focus the page)."""
    page.wait_for(f"!!({menu})", "the Nbgrader menu")
    for _ in range(tries):
        page.click(menu)
        time.sleep(0.3)
        if page.eval(f"!!({item})"):
            page.click(item)
            return
    raise AssertionError("the Nbgrader menu did not open with an 'Assignment List' entry")


def test_browser_sees_file_browser_and_assignments(lab_container, sources):
    chromium_or_skip()
    from ..helpers.browser import chromium

    released = sorted(p.name for p in sources.release.iterdir() if p.is_dir())
    with chromium(f"{lab_container.url}/lab?token={lab_container.token}") as page:
        names = page.wait_for(f"{FILES}.length && {FILES}", "the file browser", timeout=90)
        lectures = ["lectures"] if any(sources.course.glob("*.ipynb")) else []
        for expected in (*released, *lectures):
            assert expected in names, f"the file browser shows {names}, not {expected!r}"
        _open_menu_item(page, MENU, ITEM)
        text = page.wait_for(
            f"{RELEASED} && document.querySelector('#nbgrader-assignment-list').innerText",
            "nbgrader's Assignments panel",
        )
        page.wait_for(
            f"document.querySelector('#nbgrader-assignment-list').innerText.includes({released[0]!r})",
            f"assignment {released[0]} in the panel",
        )
        assert images.COURSE_ID in page.eval("document.querySelector('#nbgrader-assignment-list').innerText"), text
