from __future__ import annotations

import pytest

from autograder.core.mesh import MeshSpec, MeshSpecError, mesh_signature


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
