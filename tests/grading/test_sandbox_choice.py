"""Which sandbox `jaxcourse grade` uses: docker, failing closed with a one-line error where no
engine answers; the process sandbox, which isolates nothing, only when asked for by name, loudly."""

from __future__ import annotations

import pytest

from autograder.engine import images
from autograder.grading import classroom
from autograder.grading.sandbox import ProcessSandbox


@pytest.fixture
def no_engine(monkeypatch):
    def refuse():
        raise images.EngineUnavailable("cannot reach /var/run/docker.sock")

    monkeypatch.setattr(images, "connect", refuse)


@pytest.mark.parametrize("asked", [(), ("docker",)], ids=["default", "docker"])
def test_without_an_engine_grading_fails_closed_in_one_line(no_engine, asked):
    said: list[str] = []
    with pytest.raises(classroom.SandboxUnavailable, match="no engine answers") as err:
        classroom.open_sandbox(*asked, say=said.append)
    message = str(err.value)
    assert "\n" not in message and "docker.sock" in message and "--sandbox process" in message
    assert said == []  # nothing was started, nothing falls back


def test_process_is_chosen_without_asking_docker(monkeypatch):
    monkeypatch.setattr(images, "connect", lambda: pytest.fail("the process sandbox needs no engine"))
    said: list[str] = []
    assert isinstance(classroom.open_sandbox("process", say=said.append), ProcessSandbox)
    assert "isolates nothing" in said[0]
