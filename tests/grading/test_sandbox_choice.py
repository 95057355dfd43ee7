"""Which sandbox `jaxcourse grade` uses: docker, failing closed with a one-line error where no
engine answers; the process sandbox, which isolates nothing, only when asked for by name, loudly."""

from __future__ import annotations

import logging

import pytest

from autograder.engine import images
from autograder.grading.record import batch
from autograder.grading.sandbox.local import ProcessSandbox


@pytest.fixture
def no_engine(monkeypatch):
    def refuse():
        raise images.EngineUnavailable("cannot reach /var/run/docker.sock")

    monkeypatch.setattr(images, "connect", refuse)


@pytest.mark.parametrize("asked", [(), ("docker",)], ids=["default", "docker"])
def test_without_an_engine_grading_fails_closed_in_one_line(no_engine, asked, caplog):
    with (
        caplog.at_level(logging.INFO, logger="autograder"),
        pytest.raises(batch.SandboxUnavailable, match="no engine answers") as err,
    ):
        batch.open_sandbox(*asked)
    message = str(err.value)
    assert "\n" not in message and "docker.sock" in message and "--sandbox process" in message
    assert caplog.messages == []  # nothing was started, nothing falls back


def test_process_is_chosen_without_asking_docker(monkeypatch, caplog):
    monkeypatch.setattr(images, "connect", lambda: pytest.fail("the process sandbox needs no engine"))
    with caplog.at_level(logging.INFO, logger="autograder"):
        assert isinstance(batch.open_sandbox("process"), ProcessSandbox)
    assert caplog.records[0].levelno == logging.WARNING and "isolates nothing" in caplog.messages[0]
