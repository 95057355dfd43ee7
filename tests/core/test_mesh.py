from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.core.mesh import (
    Accelerators,
    DeviceChoice,
    MeshSpec,
    MeshSpecError,
    accelerators,
    choose_devices,
    mesh_signature,
)


@pytest.mark.parametrize(
    "text, shape, names",
    [("8:i", (8,), ("i",)), ("2x4:x,y", (2, 4), ("x", "y")), (" 4x2:data,model ", (4, 2), ("data", "model"))],
)
def test_parse(text, shape, names):
    spec = MeshSpec.parse(text)
    assert (spec.shape, spec.names) == (shape, names)
    assert str(MeshSpec.parse(str(spec))) == str(spec)


@pytest.mark.parametrize(
    "text, why",
    [
        ("8", "write sizes"),
        ("2x4:x", "2 sizes but 1 axis"),
        ("2x2:x,x", "must differ"),
        ("0:i", "at least 1"),
        ("2*4:x,y", "write sizes"),
        ("", "write sizes"),
    ],
)
def test_bad_mesh_strings_say_what_to_write(text, why):
    with pytest.raises(MeshSpecError, match=why):
        MeshSpec.parse(text)


def test_mesh_needing_more_devices_than_jax_has():
    with pytest.raises(MeshSpecError, match="needs 16 devices but JAX sees 8"):
        MeshSpec.parse("4x4:x,y").build()


def test_signature_pins_shape_names_types_devices_platform():
    a = mesh_signature(MeshSpec.parse("2x4:x,y").build())
    b = mesh_signature(MeshSpec.parse("4x2:x,y").build())
    assert a == {
        "shape": [2, 4],
        "names": ["x", "y"],
        "axis_types": ["Explicit", "Explicit"],
        "device_ids": list(range(8)),
        "platform": "cpu",
    }
    assert a != b


H100 = "NVIDIA H100 80GB HBM3"


# A table, one host per row: the formatter would split each row over several lines.
@pytest.mark.parametrize(
    "gpus, kind, why",
    [(0, "cpu", "simulated CPU devices, as this host has no accelerator."),
     (1, "cpu", "simulated CPU devices, as this host has 1 GPU device, fewer than the 8 the course's meshes need."),
     (4, "cpu", "simulated CPU devices, as this host has 4 GPU devices, fewer than the 8 the course's meshes need."),
     (8, "accelerator", f"8 of this host's 8 {H100} devices (JAXCOURSE_DEVICES=cpu runs on simulated CPU"),
     (16, "accelerator", f"8 of this host's 16 {H100} devices")],
)  # fmt: skip
def test_the_course_runs_on_the_accelerator_only_where_it_has_every_device_a_mesh_needs(gpus, kind, why):
    choice = choose_devices(8, Accelerators(gpus, "gpu", H100) if gpus else Accelerators(0))
    assert choice.kind == kind
    assert choice.line.startswith("The course's 8 devices: ") and why in choice.line and "\n" not in choice.line


def test_jaxcourse_devices_forces_a_kind_and_a_bad_value_says_what_to_write():
    eight = Accelerators(8, "tpu", "TPU v5 lite")
    assert choose_devices(8, eight, "cpu") == DeviceChoice(
        "cpu", "The course's 8 devices: simulated CPU devices, as JAXCOURSE_DEVICES=cpu."
    )
    assert choose_devices(8, eight, "accelerator").kind == "accelerator"
    with pytest.raises(MeshSpecError, match="this host has 4 TPU devices and the course's meshes need 8: unset it"):
        choose_devices(8, Accelerators(4, "tpu", "TPU v4"), "accelerator")
    with pytest.raises(MeshSpecError, match="'gpu': write auto, accelerator or cpu"):
        choose_devices(8, eight, "gpu")


def test_no_child_process_is_asked_where_no_accelerator_can_be(monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setattr("subprocess.run", lambda *a, **k: pytest.fail("probed a CPU-only host"))
    assert accelerators() == Accelerators(0)


# A notebook's first cell in a fresh process: a host with 1 GPU stands in for the probe's answer.
_NOTEBOOK = """
import sys, jax
from autograder.core import mesh
if sys.argv[1] != "none":
    mesh.accelerators = lambda: mesh.Accelerators(int(sys.argv[1]), "gpu", "NVIDIA H100 80GB HBM3")
from autograder.mesh import use_devices
use_devices(8)
shape = mesh.MeshSpec.parse("2x4:x,y").build().shape
use_devices(8)  # the setup cell run again, once JAX has started
print(jax.config.jax_platforms, sorted({d.platform for d in jax.devices()}), len(jax.devices()), dict(shape))
"""


@pytest.mark.parametrize("gpus", ["none", "1"])
def test_a_notebook_on_a_host_with_too_few_accelerators_starts_jax_on_8_cpu_devices(gpus):
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    done = subprocess.run([sys.executable, "-c", _NOTEBOOK, gpus], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    why = "this host has no accelerator" if gpus == "none" else "this host has 1 GPU device, fewer than the 8"
    first, again, devices = done.stdout.splitlines()
    assert first.startswith("The course's 8 devices: simulated CPU devices, as ") and why in first
    assert again == "The course's 8 devices: JAX has already started, on 8 CPU devices."
    assert devices == "cpu ['cpu'] 8 {'x': 2, 'y': 4}"
