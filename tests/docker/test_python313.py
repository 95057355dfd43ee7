"""The course on Python 3.13, built as a student on Debian 13 builds it: ``make venv`` from the
universal hashed locks, in a container of Debian 13's own Python (``build-offline-base.sh
--suite trixie``, like the offline base) with no network and the locks' wheels for 3.13 beside
it (``docker/wheelhouse.sh``), then the fast suite there, each parametrized test on its first
parameters (``--first-parameters``): every test's code runs on 3.13, and the sweeps over
submissions, machines and malformed inputs, which exercise the same code with other data, run
once, on the host. CI's setup makes both; elsewhere the test skips, saying how to make them.

The container starts with the session (the root conftest's ``python313_suite``) and runs beside
the other tests at the least CPU weight; this test waits for it and reads what it printed.

Inside, no test has CI=true: what needs a component the container lacks (Docker, Redis, the
hub's proxy) skips there and runs on the host, in this same suite."""

from __future__ import annotations

import re

import pytest

from ..helpers import background
from ..helpers.engine import unavailable
from ..helpers.python313 import BASE

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TIMEOUT = 900  # seconds this test waits: about 40 s to build the venv and 2 min for the suite, on 2 idle cores


def test_the_course_builds_and_passes_its_fast_suite_on_debian_13s_python_3_13(client, python313_suite):
    if isinstance(python313_suite, tuple):
        unavailable(*python313_suite)
    assert python313_suite is not None, "the session started no Python 3.13 suite"
    status, log = background.result(python313_suite, TIMEOUT)
    tail = log[-3000:]
    assert status == 0, f"make venv or the suite failed on Python 3.13:\n{tail}"
    assert re.search(r"^Python 3\.13\.\d+$", log, re.M), tail
    summary = log.strip().splitlines()[-1]
    assert re.search(r"\b\d{3,} passed\b", summary) and "failed" not in summary and "error" not in summary, tail
    skipped = [line for line in log.splitlines() if line.startswith("SKIPPED")]
    print(f"\nPython 3.13 in {BASE}: {summary}", *skipped, sep="\n  ")
