"""The exchange's files, on the host, under ``CLASS/exchange/``. No student container mounts any
of it: the exchange service (for students), the grading service and the instructor's commands
read and write it.

    outbound/<assignment>/...                          released files, as students fetch them
    inbound/<student>/<assignment>/<stamp>/...          each submission, filed under the hub's name
    inbound/<student>/<assignment>/<stamp>/submission.json   who, what, when, which files
    feedback/<student>/<assignment>/<stamp>/<notebook>.html  what that student may fetch
    outcomes/<student>/<assignment>/<stamp>.json        the grading service's record: graded once

Every write lands whole or not at all (written beside, then renamed), so a service killed
mid-write leaves nothing half there.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...core.errors import JaxcourseError
from ...core.files import write_atomic

META = "submission.json"
MAX_FILES = 100
STAMP = "%Y%m%dT%H%M%S.%fZ"  # a submission's folder name: sorts by time, safe in a path
TIMESTAMP = "%Y-%m-%d %H:%M:%S.%f UTC"  # as nbgrader writes and reads submission times


class StoreError(JaxcourseError):
    """A file name or an assignment the exchange refuses: the message says which and why."""


@dataclass(frozen=True)
class Submission:
    student: str
    assignment: str
    stamp: str
    path: Path

    @property
    def timestamp(self) -> str:
        """The submission time as nbgrader writes it."""
        when = datetime.datetime.strptime(self.stamp, STAMP).replace(tzinfo=datetime.UTC)
        return when.strftime(TIMESTAMP)

    @property
    def key(self) -> str:
        return f"{self.student}/{self.assignment}/{self.stamp}"


def safe_name(name: str) -> str:
    """A relative path with no way out of its folder, or StoreError."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or any(p in ("", ".", "..") or p.startswith(".") for p in path.parts):
        raise StoreError(f"file name {name[:80]!r} is not allowed: use plain relative names, no dot-files")
    return path.as_posix()


@dataclass(frozen=True)
class Store:
    root: Path

    # ---- released assignments -----------------------------------------------------------------

    def released(self) -> list[str]:
        folder = self.root / "outbound"
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def release(self, assignment: str, source: Path) -> Path:
        """Publish ``source`` as ``assignment``, replacing what was released before as a whole."""
        target = self.root / "outbound" / safe_name(assignment)
        staged = Path(tempfile.mkdtemp(prefix=".release-", dir=_made(target.parent)))
        shutil.copytree(source, staged, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".*", "__pycache__"))
        _open_to_all(staged)
        if target.exists():
            old = target.with_name(f".old-{assignment}-{os.getpid()}")
            os.replace(target, old)
            os.replace(staged, target)
            shutil.rmtree(old)
        else:
            os.replace(staged, target)
        return target

    def released_files(self, assignment: str) -> dict[str, bytes]:
        folder = self.root / "outbound" / safe_name(assignment)
        if not folder.is_dir():
            raise StoreError(f"no released assignment {assignment!r}; released: {', '.join(self.released()) or 'none'}")
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}

    # ---- submissions --------------------------------------------------------------------------

    def submissions(self, student: str | None = None, assignment: str | None = None) -> list[Submission]:
        """Every submission, oldest first, optionally of one student and one assignment."""
        found = []
        for folder in sorted((self.root / "inbound").glob(f"{student or '*'}/{assignment or '*'}/*")):
            if (folder / META).is_file():
                found.append(Submission(folder.parent.parent.name, folder.parent.name, folder.name, folder))
        return sorted(found, key=lambda s: (s.student, s.assignment, s.stamp))

    def submit(self, student: str, assignment: str, files: dict[str, bytes], now: datetime.datetime) -> Submission:
        """File ``files`` as ``student``'s submission of ``assignment`` at ``now``, whole or not at all."""
        if len(files) > MAX_FILES:
            raise StoreError(f"a submission holds at most {MAX_FILES} files, not {len(files)}")
        names = {safe_name(name): data for name, data in files.items()}
        folder = self.root / "inbound" / safe_name(student) / safe_name(assignment)
        staged = Path(tempfile.mkdtemp(prefix=".incoming-", dir=_made(self.root / "inbound")))
        for name, data in names.items():
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            (staged / name).write_bytes(data)
        _made(folder)
        when = now.astimezone(datetime.UTC)
        while True:  # two submissions in one microsecond: the later one is filed a microsecond on
            stamp = when.strftime(STAMP)
            meta = {"student": student, "assignment": assignment, "stamp": stamp,
                    "files": {name: len(data) for name, data in sorted(names.items())}}  # fmt: skip
            (staged / META).write_text(json.dumps(meta, indent=1))
            _open_to_all(staged)
            try:
                os.replace(staged, folder / stamp)
            except OSError as err:
                if err.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                when += datetime.timedelta(microseconds=1)
                continue
            return Submission(student, assignment, stamp, folder / stamp)

    def files(self, submission: Submission) -> list[str]:
        meta = json.loads((submission.path / META).read_text())
        return sorted(meta["files"])

    # ---- feedback and outcomes ----------------------------------------------------------------

    def feedback_dir(self, submission: Submission) -> Path:
        return self.root / "feedback" / submission.student / submission.assignment / submission.stamp

    def write_feedback(self, submission: Submission, pages: dict[str, str]) -> None:
        """``pages``: notebook name (without .ipynb) -> its HTML feedback, replacing any earlier."""
        folder = _made(self.feedback_dir(submission))
        for notebook, page in pages.items():
            write_atomic(folder / f"{safe_name(notebook)}.html", page)
            (folder / f"{notebook}.html").chmod(0o644)

    def feedback(self, submission: Submission) -> dict[str, str]:
        folder = self.feedback_dir(submission)
        return {p.stem: p.read_text() for p in sorted(folder.glob("*.html"))} if folder.is_dir() else {}

    def outcome_path(self, submission: Submission) -> Path:
        return self.root / "outcomes" / submission.student / submission.assignment / f"{submission.stamp}.json"

    def record_outcome(self, submission: Submission, outcome: dict[str, object]) -> None:
        path = self.outcome_path(submission)
        _made(path.parent)
        write_atomic(path, json.dumps(outcome, indent=1, sort_keys=True))

    def recorded(self, submission: Submission) -> bool:
        return self.outcome_path(submission).is_file()


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open_to_all(folder: Path) -> None:
    """Readable by the other services' users (the hub writes as root, the grader reads as the
    instructor), writable only by the writer."""
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
