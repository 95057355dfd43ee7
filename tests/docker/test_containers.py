"""``engine.containers``: the one way the course holds a container, tried on the real engine."""

from __future__ import annotations

import uuid

import docker.errors
import pytest

from autograder.engine.containers import PortHeld, running, started

from ..helpers.engine import a_port_held


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


@pytest.mark.parametrize(
    ("spelling", "named"),
    [
        (lambda port: ("127.0.0.1", port), "127.0.0.1:{port}"),
        (lambda port: [("127.0.0.1", port)], "127.0.0.1:{port}"),
        (lambda port: port, "0.0.0.0:{port}"),
    ],
    ids=["pair", "list", "bare-port"],
)
def test_a_start_refused_for_a_held_port_names_it_however_it_was_published(client, cpu_image, spelling, named):
    """docker-py takes a published port as a pair, a list of them, or a bare number: ``PortHeld``
    names the host address in each, and the container it made is gone."""
    mark = {"org.jaxcourse.test": uuid.uuid4().hex}
    with a_port_held(client, cpu_image) as port:
        with pytest.raises(PortHeld) as held:
            started(client, image=cpu_image, command=["true"], labels=mark, ports={"9/tcp": spelling(port)})
        assert str(held.value) == named.format(port=port)
    label = "=".join(*mark.items())
    assert client.containers.list(all=True, filters={"label": label}) == []
