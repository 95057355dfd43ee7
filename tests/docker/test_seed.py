"""Filling the work directory: first start copies, upgrades update untouched files, and a file the
student changed is never overwritten. Plain Python: these run without Docker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from autograder.delivery.seeding import seed


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_first_start_copies_everything(tmp_path):
    src = tmp_path / "src"
    write(src / "01_a" / "01_a.ipynb", "v1")
    write(src / "lectures" / "intro.ipynb", "lecture v1")
    report = seed(tmp_path / "work", {"": src})
    assert sorted(report.copied) == ["01_a/01_a.ipynb", "lectures/intro.ipynb"]
    assert (tmp_path / "work" / "01_a" / "01_a.ipynb").read_text() == "v1"


def test_upgrade_updates_untouched_files_and_keeps_edited_ones(tmp_path):
    src, work = tmp_path / "src", tmp_path / "work"
    write(src / "a.ipynb", "a v1")
    write(src / "b.ipynb", "b v1")
    seed(work, {"": src})
    write(work / "a.ipynb", "a v1 + my answer")
    write(src / "a.ipynb", "a v2")
    write(src / "b.ipynb", "b v2")
    write(src / "c.ipynb", "c v2")
    report = seed(work, {"": src})
    assert (work / "a.ipynb").read_text() == "a v1 + my answer"
    assert (work / "b.ipynb").read_text() == "b v2"
    assert (report.kept, report.updated, report.copied) == (["a.ipynb"], ["b.ipynb"], ["c.ipynb"])
    again = seed(work, {"": src})  # a restart changes nothing and still keeps the edit
    assert (work / "a.ipynb").read_text() == "a v1 + my answer" and again.kept == ["a.ipynb"]


def test_deleting_a_file_gets_a_fresh_copy(tmp_path):
    src, work = tmp_path / "src", tmp_path / "work"
    write(src / "a.ipynb", "a v1")
    seed(work, {"": src})
    (work / "a.ipynb").unlink()
    assert seed(work, {"": src}).copied == ["a.ipynb"]


def test_files_of_unknown_history_are_the_students(tmp_path):
    """A work dir that predates the manifest (or a corrupt one): differing files are kept."""
    src, work = tmp_path / "src", tmp_path / "work"
    write(src / "a.ipynb", "a v2")
    write(work / "a.ipynb", "whatever the student had")
    write(work / ".jaxcourse" / "seeded.json", "{not json")
    assert seed(work, {"": src}).kept == ["a.ipynb"]
    assert (work / "a.ipynb").read_text() == "whatever the student had"


def test_prefixes_place_sources(tmp_path):
    write(tmp_path / "course" / "intro.ipynb", "lecture")
    seed(tmp_path / "work", {"lectures": tmp_path / "course", "": tmp_path / "missing"})
    assert (tmp_path / "work" / "lectures" / "intro.ipynb").read_text() == "lecture"


def test_the_entrypoints_seed_says_what_it_kept_on_stdout(tmp_path):
    """What the container's start runs, as it runs it (`python -m autograder.delivery.lab seed`):
    its summary is the container's log, where the student reads that her edit was kept."""
    src, work = tmp_path / "src", tmp_path / "work"
    write(src / "assignments" / "a.ipynb", "a v1")
    (src / "lectures").mkdir()
    (src / "welcome").mkdir()
    argv = [sys.executable, "-m", "autograder.delivery.lab", "seed", str(src), str(work)]
    first = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert first.stdout == "jaxcourse: course files: 1 copied\n", first
    write(work / "a.ipynb", "a v1 + my answer")
    again = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert again.stdout == "jaxcourse: course files: 1 kept as you changed them (a.ipynb)\n", again
