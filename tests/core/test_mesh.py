from __future__ import annotations

from types import SimpleNamespace

import pytest

from autograder.core.mesh import MeshSpec, MeshSpecError, choose_devices, course_devices, mesh_signature


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
    [("8", "write sizes"), ("2x4:x", "2 sizes but 1 axis"), ("2x2:x,x", "must differ"),
     ("0:i", "at least 1"), ("2*4:x,y", "write sizes"), ("", "write sizes")],
)  # fmt: skip
def test_bad_mesh_strings_say_what_to_write(text, why):
    with pytest.raises(MeshSpecError, match=why):
        MeshSpec.parse(text)


def test_mesh_needing_more_devices_than_jax_has():
    with pytest.raises(MeshSpecError, match="needs 16 devices but JAX sees 8"):
        MeshSpec.parse("4x4:x,y").build()


def test_signature_pins_shape_names_types_devices_platform():
    a = mesh_signature(MeshSpec.parse("2x4:x,y").build())
    b = mesh_signature(MeshSpec.parse("4x2:x,y").build())
    assert a == {"shape": [2, 4], "names": ["x", "y"], "axis_types": ["Explicit", "Explicit"],
                 "device_ids": list(range(8)), "platform": "cpu"}  # fmt: skip
    assert a != b


def _devices(n: int, platform: str, kind: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(id=i, platform=platform, device_kind=kind) for i in range(n)]


CPUS = _devices(8, "cpu", "cpu")


@pytest.mark.parametrize(
    "gpus, platform, why",
    [(0, "cpu", "simulated CPU devices, as this host has no accelerator."),
     (1, "cpu", "simulated CPU devices, as this host has 1 GPU device, fewer than the 8 the course's meshes need."),
     (4, "cpu", "simulated CPU devices, as this host has 4 GPU devices, fewer than the 8 the course's meshes need."),
     (8, "gpu", "8 of this host's 8 NVIDIA H100 80GB HBM3 devices (JAXCOURSE_DEVICES=cpu runs on"),
     (16, "gpu", "8 of this host's 16 NVIDIA H100 80GB HBM3 devices")],
)  # fmt: skip
def test_the_course_runs_on_the_accelerator_only_where_it_has_every_device_a_mesh_needs(gpus, platform, why):
    choice = choose_devices(8, _devices(gpus, "gpu", "NVIDIA H100 80GB HBM3"), CPUS)
    assert [d.platform for d in choice.devices] == [platform] * 8 and [d.id for d in choice.devices] == list(range(8))
    assert choice.line.startswith("The course's 8 devices: ") and why in choice.line and "\n" not in choice.line


def test_jaxcourse_devices_forces_a_kind_and_a_bad_value_says_what_to_write():
    eight = _devices(8, "tpu", "TPU v5 lite")
    assert choose_devices(8, eight, CPUS, "cpu").devices == tuple(CPUS)
    assert "as JAXCOURSE_DEVICES=cpu." in choose_devices(8, eight, CPUS, "cpu").line
    assert choose_devices(8, eight, CPUS, "accelerator").devices == tuple(eight)
    with pytest.raises(MeshSpecError, match="this host has 4 TPU devices and the course's meshes need 8: unset it"):
        choose_devices(8, eight[:4], CPUS, "accelerator")
    with pytest.raises(MeshSpecError, match="'gpu': write auto, accelerator or cpu"):
        choose_devices(8, eight, CPUS, "gpu")


def test_too_few_cpu_devices_ask_for_a_restart():
    with pytest.raises(MeshSpecError, match=r"started with 4 CPU devices; 8 are needed\. Restart the kernel"):
        choose_devices(8, [], CPUS[:4])


def test_a_notebook_on_this_cpu_host_gets_8_simulated_devices_and_meshes_use_them(capsys):
    from autograder import mesh

    devices = mesh.use_devices(8)
    assert (
        capsys.readouterr().out == "The course's 8 devices: simulated CPU devices, as this host has no accelerator.\n"
    )
    assert course_devices() == devices and {d.platform for d in devices} == {"cpu"}
    assert list(MeshSpec.parse("2x4:x,y").build().devices.flat) == list(devices)
