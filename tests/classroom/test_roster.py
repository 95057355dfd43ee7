"""The roster: bad lines are refused with their line number; passwords are issued once, kept on
the next `hub up`, and only their hashes reach the hub."""

from __future__ import annotations

import csv
import json

import pytest

from classroom import roster


def _write(tmp_path, text):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, message",
    [
        ("name,role\nada,student\n", "roster.csv:1: the header must be username,role"),
        ("username,role\nAda Lovelace,student\nteach,instructor\n", "roster.csv:2: 'Ada Lovelace' is not a user name"),
        ("username,role\nada,teacher\n", "roster.csv:2: role 'teacher' must be one of student, instructor"),
        ("username,role\nada,student\nada,instructor\n", "roster.csv:3: ada is listed twice"),
        ("username,role\nada,student\n", "the roster names no instructor"),
    ],
)
def test_a_bad_roster_is_refused_with_its_line(tmp_path, text, message):
    with pytest.raises(roster.RosterError) as err:
        roster.read(_write(tmp_path, text))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_missing_roster_says_what_to_write(tmp_path):
    with pytest.raises(roster.RosterError, match="write a CSV with a header username,role"):
        roster.read(tmp_path / "nope.csv")


def test_passwords_are_issued_once_and_only_hashes_reach_the_hub(tmp_path):
    members = roster.read(
        _write(tmp_path, "username,role,password\nada,student,\nbob,student,\nteach,instructor,s3cret\n")
    )
    hub, secrets = tmp_path / "hub", tmp_path / "secrets"
    issued_path = roster.install(members, hub, secrets)
    issued = dict(csv.reader(issued_path.read_text().splitlines()[1:]))
    assert sorted(issued) == ["ada", "bob"]  # the instructor set their own
    assert oct(issued_path.stat().st_mode & 0o777) == "0o600"
    hashes = json.loads((hub / "roster.json").read_text())
    assert {n: e["role"] for n, e in hashes.items()} == {"ada": "student", "bob": "student", "teach": "instructor"}
    assert issued["ada"] not in (hub / "roster.json").read_text() and "s3cret" not in (hub / "roster.json").read_text()
    assert roster.verify(issued["ada"], hashes["ada"]["hash"]) and roster.verify("s3cret", hashes["teach"]["hash"])
    assert not roster.verify(issued["bob"], hashes["ada"]["hash"])

    # `hub up` again, with a new student: the old passwords still work, the new one gets its own.
    members = roster.read(
        _write(tmp_path, "username,role\nada,student\nbob,student\ncy,student\nteach,instructor,s3cret\n")
    )
    again = dict(csv.reader(roster.install(members, hub, secrets).read_text().splitlines()[1:]))
    hashes = json.loads((hub / "roster.json").read_text())
    assert again["ada"] == issued["ada"] and roster.verify(issued["ada"], hashes["ada"]["hash"])
    assert "cy" in again and roster.verify(again["cy"], hashes["cy"]["hash"])
