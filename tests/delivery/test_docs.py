"""The documentation: docs/ builds into a website with MkDocs, offline and strictly (a broken link,
a missing anchor or a page left out of the navigation fails the build), and the README's map
reaches every page."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers.course import REPO

PAGES = sorted(p.name for p in (REPO / "docs").glob("*.md"))


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"), "-d", str(site)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_the_documentation_builds_into_pages_that_fetch_nothing(tmp_path):
    done = build(REPO, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    for page in PAGES:
        html = (tmp_path / "site" / page.replace(".md", ".html")).read_text()
        fetched = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?://[^"]+)"', html)
        assert not fetched, f"{page} fetches {fetched}: the pages must open offline"


@pytest.mark.parametrize(
    ("breakage", "said"),
    [
        ("[a page that is not there](nowhere.md)", "nowhere.md"),
        ("[a section that is not there](grading.md#no-such-section)", "no-such-section"),
        (None, "orphan.md"),  # a page the navigation leaves out
    ],
)
def test_a_broken_link_or_a_page_left_out_fails_the_build(tmp_path, breakage, said):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    if breakage is None:
        (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n")
    else:
        with open(tmp_path / "docs" / "student.md", "a") as page:
            page.write(f"\nSee {breakage}.\n")
    done = build(tmp_path, tmp_path / "site")
    assert done.returncode != 0 and said in done.stderr, done.stderr


def test_the_readme_maps_every_page_and_each_link_reaches_one():
    readme = (REPO / "README.md").read_text()
    linked = re.findall(r"\]\(docs/([^)#]+)", readme)
    assert sorted(set(linked)) == [p for p in PAGES if p != "index.md"]
    assert len(readme.splitlines()) <= 160, (
        "the README is what a newcomer reads first: keep it short, and put the rest in docs/"
    )
