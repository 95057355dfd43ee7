"""The harness is ready for the next assignments: several inputs, given in/out specs."""

from __future__ import annotations

import jax
import numpy as np

from autograder.core.tasks import FEATURES, STACKED, Case, Input, Layout, Task
from autograder.harness import shard_map as harness
from autograder.mesh import MeshSpec
from autograder.trusted.inputs import make_inputs
from autograder.trusted.measure import compare_values, execute, host_value
from autograder.trusted.shard_map import artifact_problems

# A row-sharded matmul: x split by rows over 'x', w replicated, output split like x.
MATMUL = Task(
    name="matmul",
    grade_id="test_matmul",
    kind="shard_map",
    points={"values": 1.0},
    cases=(Case("2x4:x,y", "x", ((4, 8), (8, 3)), "float32"),),
    inputs=(Input(Layout(("AXIS", None))), Input(Layout((None, None)))),
    out_layout=Layout(("AXIS", None)),
    tolerance={"float32": (1e-5, 1e-5)},
)


def test_layouts_resolve_against_the_mesh():
    mesh = MeshSpec.parse("2x4:x,y")
    assert STACKED.spec(mesh, "y") == (("x", "y"),)
    assert STACKED.global_shape((3, 5), mesh, "y") == (24, 5)
    assert FEATURES.spec(mesh, "y") == (("x",), "y")
    assert FEATURES.global_shape((3, 5), mesh, "y") == (6, 20)
    assert FEATURES.spec(MeshSpec.parse("8:i"), "i") == (None, "i")


def test_two_inputs_with_given_specs_export_and_measure():
    sig = harness.signature(MATMUL, MATMUL.cases[0])
    assert [i["shape"] for i in sig["inputs"]] == [[8, 8], [8, 3]]
    assert sig["out_spec"] == ["x", None]

    def matmul(x, w, axis_name):
        return x @ w

    exported = jax.export.deserialize(bytearray(harness.export(matmul, sig)))
    mesh = MeshSpec.parse(sig["mesh"]).build()
    assert artifact_problems(exported, sig, mesh) == []
    args = make_inputs(sig, seed=0, mesh=mesh)
    out, structure = execute(jax.jit(exported.call), args, mesh)
    assert structure["out_spec"] == ["x"]
    assert structure["census"]["values_per_device"] == 0
    expected = np.asarray(args[0]) @ np.asarray(args[1])
    assert compare_values(out, expected, "float32", (1e-5, 1e-5), mesh) == {"ok": True, "message": ""}
    wrong = expected.copy()
    wrong[5] += 1  # a row held by the devices at x=1
    verdict = compare_values(out, wrong, "float32", (1e-5, 1e-5), mesh)
    assert not verdict["ok"]
    assert "wrong values on 4 of 8 devices" in verdict["message"] and "x=1, y=0" in verdict["message"]
    assert host_value(out)[1] == "float32"
