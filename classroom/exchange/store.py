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

from autograder.core.errors import JaxcourseError
from autograder.core.files import write_atomic

META = "submission.json"
MAX_FILES = 100
MAX_NAME = 1024  # characters in one file's relative name
MAX_PART = 255  # bytes in one part of it, as ext4 and most others allow
STAGING = "staging"  # beside inbound/: where an upload is written before it is filed whole
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
    """A relative path with no way out of its folder that every file system here can hold, or
    StoreError."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or any(p in ("", ".", "..") or p.startswith(".") for p in path.parts):
        raise StoreError(f"file name {name[:80]!r} is not allowed: use plain relative names, no dot-files")
    if any(ord(c) < 32 or c == "\x7f" for c in name) or len(name) > MAX_NAME:
        raise StoreError(
            f"file name {name[:80]!r} is not allowed: no control characters, at most {MAX_NAME} characters"
        )
    if any(len(p.encode("utf-8", "surrogatepass")) > MAX_PART for p in path.parts):
        raise StoreError(f"file name {name[:80]!r} is not allowed: each part at most {MAX_PART} bytes")
    return path.as_posix()


def _layout(files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` under safe names, or StoreError: too many, a name that leaves its folder, or one
    name that is both a file and a folder of another (``a`` beside ``a/b``)."""
    if len(files) > MAX_FILES:
        raise StoreError(f"a submission holds at most {MAX_FILES} files, not {len(files)}")
    names = {safe_name(name): data for name, data in files.items()}
    folders = {parent.as_posix() for name in names for parent in PurePosixPath(name).parents}
    clash = sorted(set(names) & folders)
    if clash or META in names:
        raise StoreError(
            f"file name {(clash or [META])[0][:80]!r} is not allowed: it is a folder of another file, "
            f"or the exchange's own {META}"
        )
    return names


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
        """Every submission, oldest first, optionally of one student and one assignment: folders
        ``inbound/<student>/<assignment>/<stamp>/`` with a name for each part that the exchange
        itself would have given (anything else there is not a submission, whoever put it there)."""
        found = []
        for folder in sorted((self.root / "inbound").glob(f"{student or '*'}/{assignment or '*'}/*")):
            who, what = folder.parent.parent.name, folder.parent.name
            if _filed_by_us(who, what, folder.name) and (folder / META).is_file() and not folder.is_symlink():
                found.append(Submission(who, what, folder.name, folder))
        return sorted(found, key=lambda s: (s.student, s.assignment, s.stamp))

    def submit(self, student: str, assignment: str, files: dict[str, bytes], now: datetime.datetime) -> Submission:
        """File ``files`` as ``student``'s submission of ``assignment`` at ``now``, whole or not at
        all: what is refused or fails half-way leaves nothing behind."""
        names = _layout(files)
        folder = self.root / "inbound" / safe_name(student) / safe_name(assignment)
        staged = Path(tempfile.mkdtemp(prefix="upload-", dir=_made(self.root / STAGING)))
        try:
            for name, data in names.items():
                (staged / name).parent.mkdir(parents=True, exist_ok=True)
                (staged / name).write_bytes(data)
            return self._file(staged, folder, student, assignment, names, now)
        except OSError as err:
            raise StoreError(
                f"the submission could not be filed ({os.strerror(err.errno or 0)}); nothing was kept"
            ) from None
        finally:
            shutil.rmtree(staged, ignore_errors=True)  # gone once filed (renamed), or on any failure

    def _file(
        self, staged: Path, folder: Path, student: str, assignment: str, names: dict[str, bytes], now: datetime.datetime
    ) -> Submission:
        """Rename ``staged`` into ``folder`` under a stamp of ``now``, a microsecond later for each
        submission already filed at that stamp."""
        _made(folder)
        when = now.astimezone(datetime.UTC)
        while True:
            stamp = when.strftime(STAMP)
            meta = {
                "student": student,
                "assignment": assignment,
                "stamp": stamp,
                "files": {name: len(data) for name, data in sorted(names.items())},
            }
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


def _filed_by_us(student: str, assignment: str, stamp: str) -> bool:
    try:
        safe_name(student), safe_name(assignment), datetime.datetime.strptime(stamp, STAMP)
    except (StoreError, ValueError):
        return False
    return "/" not in student + assignment


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open_to_all(folder: Path) -> None:
    """Readable by the other services' users (the hub writes as root, the grader reads as the
    instructor), writable only by the writer."""
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
