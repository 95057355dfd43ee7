"""The class roster: who may log in, as what, with which password.

An instructor writes a CSV (``username,role[,password]``; role ``student`` or ``instructor``).
``jaxcourse hub up`` gives every member without a password one of its own, written once to
``CLASS/secrets/passwords.csv`` for the instructor to hand out; the hub sees only their scrypt
hashes (``CLASS/hub/roster.json``). Running it again keeps every password already issued.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from autograder.core.errors import JaxcourseError
from autograder.core.files import write_atomic

ROLES = ("student", "instructor")
# Safe as a path part, a container name and a hub user name alike.
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
SCRYPT = {"n": 2**14, "r": 8, "p": 1}


class RosterError(JaxcourseError):
    """A roster that cannot be read: the message names the line and what to write instead."""


@dataclass(frozen=True)
class Member:
    name: str
    role: str
    password: str | None = None


def read(path: Path) -> list[Member]:
    """The members listed in ``path``, or RosterError naming the first bad line."""
    if not path.is_file():
        raise RosterError(f"no roster at {path}: write a CSV with a header username,role[,password]")
    rows = list(csv.reader(path.read_text().splitlines()))
    header = [h.strip().lower() for h in rows[0]] if rows else []
    if header[:2] != ["username", "role"]:
        raise RosterError(f"{path}:1: the header must be username,role[,password], not {','.join(header)!r}")
    members: dict[str, Member] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        name, role = row[0].strip(), (row[1].strip().lower() if len(row) > 1 else "")
        password = row[2].strip() if len(row) > 2 and row[2].strip() else None
        if not NAME.match(name):
            raise RosterError(f"{path}:{number}: {name!r} is not a user name (a-z first, then a-z 0-9 _ -, up to 32)")
        if role not in ROLES:
            raise RosterError(f"{path}:{number}: role {role!r} must be one of {', '.join(ROLES)}")
        if name in members:
            raise RosterError(f"{path}:{number}: {name} is listed twice")
        members[name] = Member(name, role, password)
    if not any(m.role == "instructor" for m in members.values()):
        raise RosterError(f"{path}: the roster names no instructor")
    return list(members.values())


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def verify(password: str, stored: str) -> bool:
    try:
        kind, salt, digest = stored.split("$")
    except ValueError:
        return False
    if kind != "scrypt":
        return False
    got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), **SCRYPT)
    return hmac.compare_digest(got.hex(), digest)


def install(members: list[Member], hub_dir: Path, secrets_dir: Path) -> Path:
    """Write the hashes the hub reads and the passwords the instructor hands out; returns the
    passwords file. A member already installed keeps their password unless the roster sets one."""
    hub_dir.mkdir(parents=True, exist_ok=True)
    secrets_dir.mkdir(parents=True, exist_ok=True)
    secrets_dir.chmod(0o700)
    hashes_path, issued_path = hub_dir / "roster.json", secrets_dir / "passwords.csv"
    old = json.loads(hashes_path.read_text()) if hashes_path.is_file() else {}
    issued = dict(csv.reader(issued_path.read_text().splitlines())) if issued_path.is_file() else {}
    issued.pop("username", None)
    entries = {}
    for member in members:
        if member.password is not None:
            entries[member.name] = {"role": member.role, "hash": hash_password(member.password)}
            issued.pop(member.name, None)
        elif member.name in old and member.name in issued:
            entries[member.name] = {"role": member.role, "hash": old[member.name]["hash"]}
        else:
            issued[member.name] = secrets.token_urlsafe(9)
            entries[member.name] = {"role": member.role, "hash": hash_password(issued[member.name])}
    write_atomic(hashes_path, json.dumps(entries, indent=1, sort_keys=True))
    lines = ["username,password"] + [f"{name},{pw}" for name, pw in sorted(issued.items()) if name in entries]
    write_atomic(issued_path, "\n".join(lines) + "\n")
    os.chmod(issued_path, 0o600)
    return issued_path


def load_hashes(path: Path) -> dict[str, dict[str, str]]:
    entries: dict[str, dict[str, str]] = json.loads(path.read_text())
    return entries
