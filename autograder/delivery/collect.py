"""``jaxcourse collect``: submissions into nbgrader's ``submitted/<student>/<assignment>/`` layout,
from an LMS's bulk download (a class's exchange is collected by ``classroom.exchange.collect``).

An LMS names each file after the student, in its own way; ``LMS_PATTERNS`` holds the common ones
as regular expressions with a ``student`` group (and the file's own name as ``file``, and the
LMS's own participant id as ``id`` where it gives one), and ``--pattern`` takes any other. A file
whose name matches no pattern is listed, never guessed at. Two participants whose names make the
same student id (two Jane Does) are kept apart by their LMS ids, and said to have collided.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..core.errors import JaxcourseError

# The file name each LMS gives a student's upload in its "download all submissions" archive.
LMS_PATTERNS = {
    # Canvas: doejane_12345_67890_01_collectives.ipynb (and doejane_LATE_12345_...): name, user id
    "canvas": r"^(?P<student>[a-z0-9]+)_(?:LATE_)?(?P<id>\d+)_\d+_(?P<file>.+)$",
    # Moodle: Jane Doe_123456_assignsubmission_file_/01_collectives.ipynb: name, participant id
    "moodle": r"^(?P<student>[^/_]+)_(?P<id>\d+)_assignsubmission_file_/(?P<file>[^/]+)$",
    # Blackboard: 01_collectives_janedoe_attempt_2026-11-23-18-40-01_01_collectives.ipynb
    "blackboard": r"^.+?_(?P<student>[A-Za-z0-9.]+)_attempt_[\d-]+_(?P<file>.+)$",
}
MAX_MEMBER_BYTES = 50 << 20


class CollectError(JaxcourseError):
    """An archive or pattern that cannot be collected from: the message says what to change."""


@dataclass
class Collected:
    students: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    collided: list[str] = field(default_factory=list)  # names several participants share, kept apart by id


def student_id(raw: str) -> str:
    """An LMS's name for a student as an nbgrader student id: lower case, letters, digits, _ and -."""
    cleaned = re.sub(r"[^a-z0-9_-]+", "-", raw.strip().lower()).strip("-")
    if not cleaned:
        raise CollectError(f"{raw!r} gives no usable student id")
    return cleaned


def from_zip(archive: Path, assignment: str, submitted: Path, pattern: str) -> Collected:
    """The files of an LMS archive whose names match ``pattern`` (a name in LMS_PATTERNS, or a
    regular expression with ``student`` and ``file`` groups, and ``id`` where the LMS gives one)."""
    regex = _compile(pattern)
    if not zipfile.is_zipfile(archive):
        raise CollectError(f"{archive} is not a zip archive")
    done = Collected()
    with zipfile.ZipFile(archive) as zf:
        found = _matched(zf, regex, done)
        ids: dict[str, set[str]] = {}
        for _, name, participant, _ in found:
            ids.setdefault(name, set()).add(participant)
        done.collided = sorted(name for name, seen in ids.items() if len(seen) > 1)
        for member, name, participant, file in found:
            student = f"{name}-{student_id(participant)}" if name in done.collided else name
            target = submitted / student / assignment / file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(member))
            if student not in done.students:
                done.students.append(student)
    return done


def _matched(
    zf: zipfile.ZipFile, regex: re.Pattern[str], done: Collected
) -> list[tuple[zipfile.ZipInfo, str, str, str]]:
    """(member, student id, LMS id or "", file name) for each member ``regex`` names; the others
    are listed in ``done.unmatched``."""
    found = []
    for member in zf.infolist():
        if member.is_dir():
            continue
        match = regex.match(member.filename)
        name = PurePosixPath(match.group("file")).name if match else ""
        if match is None or not name or name.startswith("."):  # no way out of the student's folder
            done.unmatched.append(member.filename)
            continue
        if member.file_size > MAX_MEMBER_BYTES:
            raise CollectError(f"{member.filename} is larger than {MAX_MEMBER_BYTES >> 20} MB")
        participant = (match.groupdict().get("id") or "").strip()
        found.append((member, student_id(match.group("student")), participant, name))
    return found


def _compile(pattern: str) -> re.Pattern[str]:
    text = LMS_PATTERNS.get(pattern, pattern)
    try:
        regex = re.compile(text)
    except re.error as err:
        raise CollectError(f"--pattern {pattern!r} is not a regular expression ({err})") from None
    if not {"student", "file"} <= set(regex.groupindex):
        known = ", ".join(LMS_PATTERNS)
        raise CollectError(f"--pattern needs (?P<student>...) and (?P<file>...) groups, or one of: {known}")
    return regex
