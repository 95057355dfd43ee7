"""The cuda and tpu images build from the same recipe and, on a machine without the hardware,
import JAX and say plainly that they fell back to CPU. (The cuda build dominates this file's
time: about 6 GB of NVIDIA wheels.)"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from autograder.delivery import lab
from autograder.engine import images

from ..helpers.images import jovyan_dir, run_once

pytestmark = pytest.mark.docker

HARDWARE = {"cuda": "GPU", "tpu": "TPU"}


@pytest.fixture(scope="module")
def built(client, sources):
    """Build a variant's image on first use: each costs minutes, so only the tests here pay."""
    done: set[str] = set()

    def image(variant: str) -> str:
        if variant not in done:
            images.build(variant, client=client, sources=sources)
            done.add(variant)
        return images.tag(variant)

    return image


@pytest.mark.parametrize("variant", ["cuda", "tpu"])
def test_variant_imports_jax_and_reports_the_fallback(client, built, variant):
    image = built(variant)
    labels = client.images.get(image).labels
    assert labels["org.jaxcourse.variant"] == variant
    code, out = run_once(client, image, ["jaxcourse-platform"], network_mode="none")
    assert code == 0, out
    line = next((x for x in out.splitlines() if x.startswith(f"jaxcourse: {variant} image")), out)
    assert f"{variant} image but no {HARDWARE[variant]} visible" in line and "falling back to CPU" in line, line
    assert "JAX 0.10.2" in line
    code, out = run_once(
        client, image, ["python", "-c", "import jax; print(jax.__version__, jax.device_count())"], network_mode="none"
    )
    assert code == 0 and "0.10.2 8" in out, out


def test_variant_container_options():
    work = Path("/tmp/work")
    cuda = lab.container_options("cuda", work, 8888, "t")
    assert cuda["device_requests"][0]["Capabilities"] == [["gpu"]] and cuda["ports"]
    tpu = lab.container_options("tpu", work, 9999, "t")
    assert tpu["privileged"] and tpu["network_mode"] == "host" and tpu["environment"]["JUPYTER_PORT"] == "9999"
    assert "ports" not in tpu and "device_requests" not in lab.container_options("cpu", work, 1, "t")


def test_cuda_lab_without_gpu_runtime_starts_on_cpu(client, built, tmp_path, caplog):
    built("cuda")
    options = lab.container_options("cuda", jovyan_dir(tmp_path / "work"), 0, "t") | {
        "ports": {"8888/tcp": ("127.0.0.1", None)}
    }
    with caplog.at_level(logging.INFO, logger="autograder"):
        container = lab.start_container(client, options)
    try:
        lab.wait_healthy(container)
    finally:
        container.remove(force=True)
    if "nvidia" not in client.info().get("Runtimes", {}):
        assert caplog.messages and "no GPU runtime" in caplog.messages[0], caplog.messages
