"""``deploy.start``: what runs for the class is left running; a renewable container (the swarm's
registry and work-folders server, published on the manager's address) is replaced once its
options change, and only then."""

from __future__ import annotations

import logging

import pytest

from autograder.core.course import Course
from autograder.engine.containers import remove
from classroom.hub import deploy

from ...helpers.classroom import class_course, new_class
from ...helpers.engine import a_port_held

pytestmark = [pytest.mark.docker]


def _options(deployment: deploy.Deployment, image: str, where: str) -> dict:
    return {
        "image": image,
        "entrypoint": ["sleep", "600"],
        "command": [],
        "environment": {"WHERE": where},
        "labels": deployment.labels,
        "healthcheck": {"test": ["NONE"]},
        **deploy.locked_down(),
    }


def test_a_renewable_container_is_replaced_when_its_options_change_and_only_then(
    client, cpu_image, course, tmp_path, caplog
):
    deployment = new_class(tmp_path / "renew", class_course(Course(course.root)))
    name = f"{deployment.name}-probe"
    caplog.set_level(logging.INFO, logger="classroom")
    try:
        deploy.start(client, name, None, **_options(deployment, cpu_image, "10.0.0.5"))
        first = client.containers.get(name).id
        deploy.start(client, name, None, **_options(deployment, cpu_image, "10.0.0.9"))
        assert client.containers.get(name).id == first  # by default what runs is left running
        deploy.start(client, name, None, renew=True, **_options(deployment, cpu_image, "10.0.0.9"))
        renewed = client.containers.get(name)
        assert renewed.id != first and "WHERE=10.0.0.9" in renewed.attrs["Config"]["Env"]
        deploy.start(client, name, None, renew=True, **_options(deployment, cpu_image, "10.0.0.9"))
        assert client.containers.get(name).id == renewed.id  # the same options: left running
        deploy.start(client, name, None, renew=True, **_options(deployment, cpu_image, "10.0.0.7"))
        assert "WHERE=10.0.0.7" in client.containers.get(name).attrs["Config"]["Env"]
        assert caplog.messages == [
            f"{name}: started",
            f"{name}: already running",
            f"{name}: started",
            f"{name}: already running",
            f"{name}: started",
        ]
    finally:
        for container in client.containers.list(all=True, filters={"name": f"^{name}$"}):
            remove(container)


def test_a_port_held_elsewhere_is_one_line_naming_it_and_leaves_no_container(client, cpu_image, course, tmp_path):
    deployment = new_class(tmp_path / "held", class_course(Course(course.root)))
    name = f"{deployment.name}-hub"
    with a_port_held(client, cpu_image) as port:
        options = _options(deployment, cpu_image, "here") | {"ports": {"8000/tcp": ("127.0.0.1", port)}}
        with pytest.raises(deploy.HubError, match=rf"^{name}: 127\.0\.0\.1:{port} is held by something else; .*--port"):
            deploy.start(client, name, None, **options)
    assert client.containers.list(all=True, filters={"name": f"^{name}$"}) == []
