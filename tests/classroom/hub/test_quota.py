"""Each user's work folder is held to the class's quota: the service stops the server of a folder
over it, leaving a note that says why, and the hub does not start it again until the folder is
back under (tests/classroom/hub fills a real student's folder)."""

from __future__ import annotations

from classroom.hub import quota


def test_sizes_read_as_the_settings_write_them():
    assert [quota.size_bytes(s) for s in ("512k", "50m", "2g", "1.5G")] == [512 << 10, 50 << 20, 2 << 30, 3 << 29]


def test_a_folder_over_its_quota_has_its_server_stopped_and_is_told_why(tmp_path):
    home = tmp_path / "home"
    for name, size in (("ada", 1 << 20), ("eve", 3 << 20), ("idle", 5 << 20)):
        (home / name).mkdir(parents=True)
        (home / name / "data.bin").write_bytes(b"x" * size)
    stopped: list[str] = []
    assert quota.sweep(home, 2 << 20, {"ada", "eve"}, stopped.append) == ["eve"] == stopped
    note = (home / "eve" / quota.NOTE).read_text()
    assert "more than the class's quota of 2 MB" in note and not (home / "ada" / quota.NOTE).exists()
    assert quota.over(home / "idle", 2 << 20)  # not running: left alone now, refused at its next start
    (home / "eve" / "data.bin").unlink()
    assert quota.over(home / "eve", 2 << 20) == ""
