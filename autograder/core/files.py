"""Files written so that a killed process cannot leave them half done, and files read from
someone else's hands without following where they point."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import JaxcourseError


class NotRegular(JaxcourseError):
    """A link, a directory, a pipe or a device where a regular file should be."""


class TooLarge(JaxcourseError):
    """A regular file over its reader's limit; ``size``: its size in bytes."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


def write_atomic(path: Path, data: str | bytes) -> None:
    """``path`` holds either its old content or all of ``data``, never a part of it."""
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        tmp.write_text(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def read_regular(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file, never following a link (its writer may have
    pointed it anywhere on this host) and never blocking on a pipe. ``FileNotFoundError`` when
    there is nothing at ``path``, ``NotRegular`` or ``TooLarge`` otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as err:  # ELOOP: a link; others: no right to read it, or no such kind of file
        raise NotRegular(f"{path.name} is not a regular file ({os.strerror(err.errno or 0)})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRegular(f"{path.name} is not a regular file")
    if info.st_size > limit:
        os.close(fd)
        raise TooLarge(f"{path.name} holds {info.st_size} bytes; the limit is {limit}", info.st_size)
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise TooLarge(f"{path.name} holds more than {limit} bytes; the limit is {limit}", len(data))
    return data
