"""The trusted side refuses artifacts that are not the task's pure array program on its mesh."""

from __future__ import annotations

import functools

import jax
import pytest

from autograder.core.mesh import MeshSpec, mesh_signature
from autograder.grading.pipeline.plan import plan
from autograder.grading.pipeline.trusted_worker import evaluation
from autograder.harness import shard_map as harness
from autograder.specs import get
from autograder.trusted import reference
from autograder.trusted import shard_map as trusted_shard_map
from autograder.trusted.job_process import MeshMismatch, check_meshes
from autograder.trusted.shard_map import artifact_problems

TASK = get("01_collectives").task("ring_all_gather")
SIG = harness.signature(TASK, TASK.cases[1])  # 2x4:x,y over 'y'


@functools.cache
def _mesh():
    """The task's mesh, built on first use: after the session's fixture has given JAX its devices."""
    return MeshSpec.parse(SIG["mesh"]).build()


def _exported(fn, sig=SIG):
    return jax.export.deserialize(bytearray(harness.export(fn, sig)))


def _gather(x, axis):
    return jax.lax.all_gather(x, axis, tiled=True)


def test_a_plain_export_is_accepted():
    assert artifact_problems(_exported(_gather), SIG, _mesh()) == []


@pytest.mark.parametrize("target", ["steal_answers", "steal answers", 'steal "quoted" answers'])
def test_custom_calls_are_refused(target):
    """jax.export itself refuses host callbacks; a runner that forges its own export with a
    foreign custom call (and the safety check switched off) is refused here, whatever the
    target's name (one that MLIR prints quoted, ``@"steal answers"``, once slipped through)."""

    def foreign(x, axis):
        return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(_gather(x, axis))

    wrapped, structs, _ = harness.build(foreign, SIG)
    check = jax.export.DisabledSafetyCheck.custom_call(target)
    forged = jax.export.export(wrapped, disabled_checks=[check])(*structs)
    problems = artifact_problems(jax.export.deserialize(forged.serialize()), SIG, _mesh())
    assert "exported with safety checks disabled" in problems
    assert any("custom calls or host callbacks: " in p and "steal" in p for p in problems), problems


def test_other_shardings_or_meshes_are_refused():
    other = {**SIG, "inputs": [{**SIG["inputs"][0], "spec": [None]}]}
    assert any("inputs are" in p for p in artifact_problems(_exported(_gather, other), SIG, _mesh()))
    transposed = {**SIG, "mesh": "4x2:x,y"}
    shape = [SIG["inputs"][0]["shape"][0], *SIG["inputs"][0]["shape"][1:]]
    transposed["inputs"] = [{**SIG["inputs"][0], "shape": shape}]
    problems = artifact_problems(_exported(_gather, transposed), SIG, _mesh())
    assert any("not on the task's mesh" in p for p in problems), problems


def test_a_mesh_signature_mismatch_is_a_hard_error():
    ours = mesh_signature(_mesh())
    check_meshes({SIG["mesh"]: ours})
    with pytest.raises(MeshMismatch, match="the sandbox ran on"):
        check_meshes({SIG["mesh"]: {**ours, "device_ids": ours["device_ids"][::-1]}})


def test_a_program_that_would_take_the_grader_s_memory_is_refused_before_it_runs(tmp_path):
    """Right values on a tiny case, and a running sum over a 32768 x 32768 array it makes for
    itself: 8 GiB per device, 64 GiB on the mesh, more than this machine has. Run, it would take
    the grading machine from every other student; its compiled peak refuses it first."""
    import jax.numpy as jnp
    import numpy as np

    def hog(x, axis):
        held = jnp.cumsum(jnp.broadcast_to(x[0, 0].astype(jnp.float32), (2**15, 2**15)), axis=0)
        return _gather(x, axis) + 0 * held[-1, -1].astype(x.dtype)

    planned = plan("01_collectives", (TASK,), "", lambda t, c: {})[0]  # 8:i, bfloat16
    artifact = tmp_path / "hog.jaxexport"
    artifact.write_bytes(harness.export(hog, planned.sig))
    reference.save(tmp_path / "reference", {"dtype": "bfloat16", "structure": {}}, {"value": np.zeros(1)})
    entry = evaluation(planned, str(tmp_path / "reference"), None)
    measured = trusted_shard_map.measure({**entry, "failure": "", "artifact": str(artifact)})
    message = measured["values"]["message"]
    assert message.startswith("failed to run: needs 8.0 GiB per device at its peak") and "over 1 GiB" in message
