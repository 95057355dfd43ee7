"""``engine.containers``: the one way the course holds a container, tried on the real engine."""

from __future__ import annotations

import uuid

import docker.errors
import pytest

from autograder.engine.containers import running


def test_a_container_the_engine_makes_but_cannot_start_is_removed(client, cpu_image):
    """docker-py's ``containers.run`` leaves the container it made when its start fails (here a
    kernel setting the runtime refuses at start, not at create): ``running`` removes it too."""
    mark = {"org.jaxcourse.test": uuid.uuid4().hex}
    refused = {"kernel.shmmni": "none"}
    with (
        pytest.raises(docker.errors.APIError, match=r"/start"),
        running(client, image=cpu_image, command=["true"], labels=mark, sysctls=refused),
    ):
        pytest.fail("the block ran, though its container never started")
    label = "=".join(*mark.items())
    assert client.containers.list(all=True, filters={"label": label}) == []
