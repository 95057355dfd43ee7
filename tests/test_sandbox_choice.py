"""Which sandbox `jaxcourse grade` uses: docker when an engine answers, a loud fallback to the
process sandbox under `auto`, and a one-line error when docker is demanded and absent."""

from __future__ import annotations

import pytest

from autograder.grading import classroom, images
from autograder.grading.sandbox import ProcessSandbox


@pytest.fixture
def no_engine(monkeypatch):
    def refuse():
        raise images.EngineUnavailable("cannot reach /var/run/docker.sock")

    monkeypatch.setattr(images, "connect", refuse)


def test_docker_without_an_engine_is_a_one_line_error(no_engine):
    with pytest.raises(classroom.SandboxUnavailable, match="--sandbox docker needs a Docker engine") as err:
        classroom.open_sandbox("docker")
    assert "\n" not in str(err.value) and "docker.sock" in str(err.value)


def test_auto_without_an_engine_falls_back_and_says_so(no_engine):
    said: list[str] = []
    box = classroom.open_sandbox("auto", say=said.append)
    assert isinstance(box, ProcessSandbox) and not box.isolates
    assert len(said) == 1 and "isolates nothing" in said[0]


def test_process_is_chosen_without_asking_docker(monkeypatch):
    monkeypatch.setattr(images, "connect", lambda: pytest.fail("the process sandbox needs no engine"))
    said: list[str] = []
    assert isinstance(classroom.open_sandbox("process", say=said.append), ProcessSandbox)
    assert "isolates nothing" in said[0]
