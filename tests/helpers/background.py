"""Containers a test session starts as it begins and a test reads at its turn. Each is CPU work
that needs nothing of the tests before it, so it runs beside them, on the CPU the Docker tests
leave idle while they wait for containers, hubs and nodes, not on the run's critical path.

Each runs at the least CPU weight Docker gives: beside other containers (the sandboxes, the hub,
the cluster) it takes only what they leave."""

from __future__ import annotations

from typing import Any

import pytest

from autograder.engine import images
from autograder.engine.containers import remove

LEAST_CPU_SHARES = 2


def selected(request: pytest.FixtureRequest, nodeid: str) -> bool:
    """Whether the test that reads the result runs in this session, with an engine to run it on
    (without one, that test says so itself)."""
    if not any(item.nodeid == nodeid for item in request.session.items):
        return False
    try:
        images.connect()
    except images.EngineUnavailable:
        return False
    return True


def fixture_value(request: pytest.FixtureRequest, name: str) -> Any:
    """Another session fixture's value, or None where it failed or skipped: the test that reads
    the result asks for it too and reports that failure as its own, not every test of the session."""
    try:
        return request.getfixturevalue(name)
    except (Exception, pytest.skip.Exception, pytest.fail.Exception):
        return None


def start(client, image: str, command: list[str], files: bytes | None = None, **options):
    """``command`` started in a new container of ``image``, with ``files`` (a tar) unpacked at
    ``/`` first; the caller removes it (``remove``)."""
    container = client.containers.create(image, command, cpu_shares=LEAST_CPU_SHARES, **options)
    try:
        if files is not None:
            container.put_archive("/", files)
        container.start()
    except BaseException:
        remove(container)
        raise
    return container


def result(container, timeout: float) -> tuple[int, str]:
    """Its exit status and output (stdout and stderr), waiting at most ``timeout`` seconds more."""
    status = container.wait(timeout=timeout)["StatusCode"]
    return status, container.logs().decode(errors="replace")
