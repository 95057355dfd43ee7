"""The exchange's store: submissions filed whole under the student's name, file names that could
reach out of a submission's folder refused, feedback and outcomes per submission."""

from __future__ import annotations

import datetime
import errno
import json
from pathlib import Path

import pytest

from classroom.exchange.store import MAX_FILES, Store, StoreError

NOW = datetime.datetime(2026, 11, 23, 18, 40, 1, 123456, tzinfo=datetime.UTC)


def test_a_submission_is_filed_under_its_student_with_its_time(tmp_path):
    store = Store(tmp_path)
    sub = store.submit("ada", "01_collectives", {"01_collectives.ipynb": b"{}", "notes/extra.txt": b"hi"}, NOW)
    assert sub.path == tmp_path / "inbound" / "ada" / "01_collectives" / "20261123T184001.123456Z"
    assert sub.timestamp == "2026-11-23 18:40:01.123456 UTC"
    assert store.files(sub) == ["01_collectives.ipynb", "notes/extra.txt"]
    assert (sub.path / "notes" / "extra.txt").read_bytes() == b"hi"
    assert json.loads((sub.path / "submission.json").read_text())["student"] == "ada"
    later = store.submit("ada", "01_collectives", {"01_collectives.ipynb": b"{ }"}, NOW + datetime.timedelta(seconds=1))
    store.submit("bob", "01_collectives", {"01_collectives.ipynb": b"{}"}, NOW)
    assert store.submissions("ada") == [sub, later]
    assert [s.student for s in store.submissions(assignment="01_collectives")] == ["ada", "ada", "bob"]
    assert not list((tmp_path / "staging").iterdir())  # nothing half-written stays behind


@pytest.mark.parametrize(
    "name", ["../bob/01_collectives/x.ipynb", "/etc/passwd", "a/../../x", ".hidden", "sub/.git/config", ""]
)
def test_a_name_that_could_leave_the_submission_is_refused(tmp_path, name):
    with pytest.raises(StoreError, match="is not allowed: use plain relative names"):
        Store(tmp_path).submit("ada", "01_collectives", {name: b"x"}, NOW)
    assert not (tmp_path / "inbound" / "bob").exists() and not list(tmp_path.rglob("x"))


def test_too_many_files_are_refused(tmp_path):
    files = {f"f{i}.txt": b"" for i in range(MAX_FILES + 1)}
    with pytest.raises(StoreError, match=f"at most {MAX_FILES} files, not {MAX_FILES + 1}"):
        Store(tmp_path).submit("ada", "01_collectives", files, NOW)


def test_release_replaces_as_a_whole_and_feedback_and_outcomes_are_per_submission(tmp_path):
    store, release = Store(tmp_path / "exchange"), tmp_path / "release"
    release.mkdir()
    (release / "a.ipynb").write_text("one")
    (release / ".ipynb_checkpoints").mkdir()
    store.release("01_collectives", release)
    (release / "a.ipynb").write_text("two")
    store.release("01_collectives", release)
    assert store.released() == ["01_collectives"]
    assert store.released_files("01_collectives") == {"a.ipynb": b"two"}
    with pytest.raises(StoreError, match="no released assignment '02_sharded_matmul'; released: 01_collectives"):
        store.released_files("02_sharded_matmul")

    first = store.submit("ada", "01_collectives", {"a.ipynb": b"{}"}, NOW)
    second = store.submit("ada", "01_collectives", {"a.ipynb": b"{}"}, NOW + datetime.timedelta(minutes=1))
    store.write_feedback(first, {"a": "<p>first</p>"})
    assert store.feedback(first) == {"a": "<p>first</p>"} and store.feedback(second) == {}
    assert not store.recorded(first)
    store.record_outcome(first, {"score": 3})
    assert store.recorded(first) and not store.recorded(second)


def test_two_submissions_in_one_microsecond_are_both_kept(tmp_path):
    store = Store(tmp_path)
    first = store.submit("ada", "01_collectives", {"a.ipynb": b"1"}, NOW)
    second = store.submit("ada", "01_collectives", {"a.ipynb": b"2"}, NOW)
    assert (first.stamp, second.stamp) == ("20261123T184001.123456Z", "20261123T184001.123457Z")
    assert [(s.path / "a.ipynb").read_bytes() for s in store.submissions("ada")] == [b"1", b"2"]


def _left_on_disk(root) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    "files, why",
    [
        ({"a": b"x", "a/b": b"y"}, "'a' is not allowed: it is a folder of another file"),
        ({"nb\x00.ipynb": b"x"}, "no control characters"),
        ({"x" * 300 + ".ipynb": b"x"}, "each part at most 255 bytes"),
        ({"submission.json": b"{}"}, "the exchange's own submission.json"),
    ],
    ids=["file-and-folder", "nul", "long-part", "meta"],
)
def test_an_upload_the_file_system_cannot_hold_is_refused_and_nothing_is_kept(tmp_path, files, why):
    store = Store(tmp_path)
    with pytest.raises(StoreError, match=why):
        store.submit("ada", "01_collectives", {"ok.ipynb": b"{}", **files}, NOW)
    assert _left_on_disk(tmp_path) == [] and store.submissions() == []


def test_a_write_that_fails_half_way_keeps_nothing(tmp_path, monkeypatch):
    store, real = Store(tmp_path), Path.write_bytes
    written = []

    def fails_second(path, data):
        written.append(path)
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data)

    monkeypatch.setattr(Path, "write_bytes", fails_second)
    with pytest.raises(StoreError, match="could not be filed \\(No space left on device\\); nothing was kept"):
        store.submit("ada", "01_collectives", {"a.ipynb": b"1", "b.ipynb": b"2"}, NOW)
    assert len(written) == 2 and _left_on_disk(tmp_path) == [] and store.submissions() == []


def test_only_what_the_exchange_filed_is_a_submission(tmp_path):
    """Folders in inbound/ that the exchange never makes (a dot-named student, as a half-written
    upload once was; a stamp that is not a time; a link) are not submissions, whatever they hold."""
    store = Store(tmp_path)
    real = store.submit("ada", "01_collectives", {"a.ipynb": b"{}"}, NOW)
    meta = (real.path / "submission.json").read_text()
    for fake in (".incoming-x1/01_collectives/20261123T184001.123456Z", "eve/01_collectives/latest"):
        (tmp_path / "inbound" / fake).mkdir(parents=True)
        (tmp_path / "inbound" / fake / "submission.json").write_text(meta)
    (tmp_path / "inbound" / "eve" / "01_collectives" / "20261123T184001.123456Z").symlink_to(real.path)
    assert store.submissions() == [real]
