"""Collecting: each student's latest submission from the exchange, and an LMS's archive by its
file-name pattern; a name that matches no pattern, or would leave its folder, is listed, never
written."""

from __future__ import annotations

import datetime
import zipfile

import pytest

from autograder.delivery import collect
from classroom.exchange.collect import from_exchange
from classroom.exchange.store import Store

NOW = datetime.datetime(2026, 11, 23, 18, 0, tzinfo=datetime.UTC)


def test_the_latest_submission_of_each_student_is_collected(tmp_path):
    store = Store(tmp_path / "exchange")
    store.submit("ada", "01_collectives", {"01_collectives.ipynb": b"first"}, NOW)
    store.submit("ada", "01_collectives", {"01_collectives.ipynb": b"second"}, NOW + datetime.timedelta(hours=1))
    store.submit("bob", "01_collectives", {"01_collectives.ipynb": b"bob's"}, NOW)
    store.submit("bob", "02_sharded_matmul", {"02_sharded_matmul.ipynb": b"other"}, NOW)
    done = from_exchange(store, "01_collectives", tmp_path / "submitted")
    assert done.students == ["ada", "bob"]
    ada = tmp_path / "submitted" / "ada" / "01_collectives"
    assert (ada / "01_collectives.ipynb").read_bytes() == b"second"
    assert (ada / "timestamp.txt").read_text().strip() == "2026-11-23 19:00:00.000000 UTC"
    assert not (ada / "submission.json").exists()
    assert not (tmp_path / "submitted" / "bob" / "02_sharded_matmul").exists()


@pytest.mark.parametrize(
    "lms, member, student",
    [
        ("canvas", "doejane_12345_67890_01_collectives.ipynb", "doejane"),
        ("canvas", "doejane_LATE_12345_67890_01_collectives.ipynb", "doejane"),
        ("moodle", "Jane Doe_123456_assignsubmission_file_/01_collectives.ipynb", "jane-doe"),
        ("blackboard", "01_collectives_jdoe_attempt_2026-11-23-18-40-01_01_collectives.ipynb", "jdoe"),
    ],
)
def test_each_lms_archive_lands_in_the_submitted_layout(tmp_path, lms, member, student):
    archive = tmp_path / "all.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(member, b"notebook")
        zf.writestr("index.html", b"the LMS's own page")
    done = collect.from_zip(archive, "01_collectives", tmp_path / "submitted", lms)
    assert done.students == [student] and done.unmatched == ["index.html"]
    assert (tmp_path / "submitted" / student / "01_collectives" / "01_collectives.ipynb").read_bytes() == b"notebook"


def test_names_that_would_leave_a_students_folder_are_not_written(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("mallory_1_2_..", b"x")
        zf.writestr("mallory_1_2_.bashrc", b"x")
    done = collect.from_zip(archive, "01_collectives", tmp_path / "submitted", "canvas")
    assert done.students == [] and len(done.unmatched) == 2
    assert not (tmp_path / "submitted").exists()


@pytest.mark.parametrize(
    "pattern, message",
    [("(?P<student>x", "is not a regular expression"), ("(?P<who>.*)", "needs (?P<student>...) and (?P<file>...)")],
)
def test_a_bad_pattern_says_what_it_needs(tmp_path, pattern, message):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("x", b"")
    with pytest.raises(collect.CollectError) as err:
        collect.from_zip(archive, "01_collectives", tmp_path / "s", pattern)
    assert message in str(err.value)


def test_not_a_zip_is_refused(tmp_path):
    (tmp_path / "a.zip").write_text("no")
    with pytest.raises(collect.CollectError, match="is not a zip archive"):
        collect.from_zip(tmp_path / "a.zip", "01_collectives", tmp_path / "s", "canvas")


@pytest.mark.parametrize(
    "lms, members",
    [
        ("canvas", ["doejane_111_9_01_collectives.ipynb", "doejane_222_8_01_collectives.ipynb"]),
        (
            "moodle",
            [
                "Jane Doe_111_assignsubmission_file_/01_collectives.ipynb",
                "Jane Doe_222_assignsubmission_file_/01_collectives.ipynb",
            ],
        ),
    ],
)
def test_two_participants_of_one_name_are_kept_apart_by_their_lms_id(tmp_path, lms, members):
    archive = tmp_path / "all.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for number, member in enumerate(members):
            zf.writestr(member, f"notebook {number}".encode())
        zf.writestr(members[0].replace("01_collectives.ipynb", "notes.txt"), b"hers")
    done = collect.from_zip(archive, "01_collectives", tmp_path / "submitted", lms)
    name = "doejane" if lms == "canvas" else "jane-doe"
    assert done.collided == [name] and sorted(done.students) == [f"{name}-111", f"{name}-222"]
    for number, student in enumerate((f"{name}-111", f"{name}-222")):
        folder = tmp_path / "submitted" / student / "01_collectives"
        assert (folder / "01_collectives.ipynb").read_bytes() == f"notebook {number}".encode()
    assert (tmp_path / "submitted" / f"{name}-111" / "01_collectives" / "notes.txt").read_bytes() == b"hers"
