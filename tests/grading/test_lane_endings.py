"""How a lane reads the end of its server, asked of the engine: what the engine says decides
between a job graded ``crashed`` (it ended the lane) and ``SandboxLost`` (something else did, and
the job is graded again). In-process, on a stand-in for docker-py's container: the branches a real
container reaches only by chance (its server, not the job, chosen by the kernel's OOM killer) are
held here; ``test_lanes.py`` holds the ones a test can provoke on a real engine."""

from __future__ import annotations

import signal
from pathlib import Path
from types import SimpleNamespace

import docker.errors
import pytest
import requests.exceptions

from autograder.grading.sandbox.docker_sandbox import _never_ran
from autograder.grading.sandbox.lanes import Lane, SandboxLost


class Container:
    """What ``Lane._ended`` and ``_never_ran`` ask of docker-py's container: its exit status, its
    state once reloaded, its removal; ``fails`` is raised by the first question, as an engine
    that does not answer or a removed container raises it."""

    def __init__(self, code: int = 0, oom: bool = False, fails: Exception | None = None) -> None:
        self.code, self.fails, self.removed = code, fails, False
        self.attrs = {"State": {"OOMKilled": oom, "ExitCode": code}}

    def wait(self, timeout: float) -> dict:
        if self.fails is not None:
            raise self.fails
        return {"StatusCode": self.code}

    def reload(self) -> None:
        pass

    def remove(self, force: bool) -> None:
        self.removed = force


def ended(container: Container):
    return Lane._ended(SimpleNamespace(container=container), "2g")


@pytest.mark.parametrize("code", [128 + signal.SIGKILL, 1])
def test_a_server_the_oom_killer_ended_grades_its_job_crashed_for_its_memory(code):
    outcome = ended(Container(code, oom=True))
    assert (outcome.status, outcome.returncode) == ("crashed", None)
    assert outcome.reason == "ran out of memory (the limit is 2g)"


def test_a_server_sigkilled_without_running_out_of_memory_was_killed_from_outside():
    with pytest.raises(SandboxLost, match="killed from outside its job"):
        ended(Container(128 + signal.SIGKILL))


@pytest.mark.parametrize("code", [1, 2])
def test_a_server_that_exited_on_its_own_grades_its_job_crashed(code):
    """Its own exits (a child that would not die) end it with a status of its own."""
    outcome = ended(Container(code))
    assert (outcome.status, outcome.reason) == ("crashed", "stopped with its sandbox's container")


@pytest.mark.parametrize(
    ("fails", "says"),
    [
        (docker.errors.NotFound("gone"), "removed under its job"),
        (requests.exceptions.ConnectionError("refused"), "did not answer for the lane's container: ConnectionError"),
        (requests.exceptions.ReadTimeout("slow"), "did not answer for the lane's container: ReadTimeout"),
        (docker.errors.APIError("500"), "did not answer for the lane's container: APIError"),
    ],
    ids=["removed", "refused", "timed-out", "engine-error"],
)
def test_a_lane_the_engine_cannot_account_for_loses_its_job_to_be_graded_again(fails, says):
    with pytest.raises(SandboxLost, match=says):
        ended(Container(fails=fails))


def lane_with(tmp_path: Path, *written: str) -> SimpleNamespace:
    out = tmp_path / "out"
    out.mkdir()
    for name in written:
        (out / name).write_text("1")
    return SimpleNamespace(container=Container(), out=out)


def test_a_job_that_never_started_leaves_its_lane_removed_and_may_run_fresh(tmp_path):
    lane = lane_with(tmp_path)
    _never_ran(lane)
    assert lane.container.removed


def test_a_job_that_wrote_before_its_server_fell_silent_is_not_run_again_on_its_leavings(tmp_path):
    """A fresh run on a folder the first run wrote to would grade what it left: the job is lost."""
    lane = lane_with(tmp_path, "results.json")
    with pytest.raises(SandboxLost, match="fell silent after its job had started"):
        _never_ran(lane)
    assert lane.container.removed
