"""Fixtures for the image tests: one running lab per session, on the root conftest's engine
(``client``) and cpu image (``cpu_image``), which the sandbox tests share. Their helpers live in
``tests/helpers/images.py``.

Under CI=true a missing engine or browser is a failure: CI must prove that the images build and
serve. Elsewhere (a laptop without Docker) the tests skip, with the reason in the summary.

The image is built from the checkout, with assignments released from the current sources into
a private copy (the root conftest's ``course`` fixture), so the repository is never written to.
Every container a fixture starts is removed, pass or fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from autograder.delivery import lab
from autograder.engine.containers import host_port, running

from ..helpers.images import Lab, jovyan_dir


@pytest.fixture(scope="session")
def lab_container(client, cpu_image, tmp_path_factory) -> Iterator[Lab]:
    """The cpu image serving JupyterLab on a free 127.0.0.1 port, with a host work directory."""
    work = jovyan_dir(tmp_path_factory.mktemp("lab-work"))
    token = "test-" + os.urandom(12).hex()
    options = dict(
        image=cpu_image,
        environment={"JUPYTER_TOKEN": token},
        user="1000:100",
        ports={"8888/tcp": ("127.0.0.1", None)},
        volumes={str(work): {"bind": lab.WORK_IN_CONTAINER, "mode": "rw"}},
    )
    with running(client, **options) as container:
        lab.wait_healthy(container)
        yield Lab(container, f"http://127.0.0.1:{host_port(container, '8888/tcp')}", token, work)
