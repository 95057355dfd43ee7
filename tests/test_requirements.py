"""The locks leave out rfc3987-syntax and lark, its only user: jsonschema imports the first when it
is there, for a string format nothing of ours checks, and it builds a grammar as it is imported,
a second of every process that imports nbformat or a Jupyter server (every ``jaxcourse`` command,
nbgrader's, a lab's, the hub's services). A re-lock keeps them out (the Makefile's ``lock``)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .helpers.course import REPO

LEFT_OUT = ("rfc3987-syntax", "lark")
LOCKS = sorted((REPO / "requirements").glob("*.lock"))


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_the_locks_leave_out_the_slow_import(lock):
    pinned = set(re.findall(r"^([a-z0-9][a-z0-9._-]*)==", lock.read_text(), re.M))
    assert pinned and not pinned & set(LEFT_OUT), f"{lock.name} pins {sorted(pinned & set(LEFT_OUT))}"


def test_a_re_lock_leaves_them_out():
    recipe = (REPO / "Makefile").read_text()
    compile_line = next(line for line in recipe.splitlines() if line.startswith("UV :="))
    assert all(f"--no-emit-package {name}" in compile_line for name in LEFT_OUT), compile_line


def test_nbformat_imports_without_it():
    done = subprocess.run(
        [sys.executable, "-c", "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "False", "rfc3987_syntax is installed: make a fresh venv from the locks"
