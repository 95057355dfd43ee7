"""The train_step kind: a training step exported as an array program, through a flat wrapper (a
list of state leaves, the batch and a key in; the new leaves and the loss out), so that the
trusted side can run it on inputs the sandbox never saw and read its collectives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.mesh import MeshSpec
from ..core.records import StepSig
from ..core.tasks import Case, Task, Training
from .layouts import given_for
from .shard_map import key_dtype

REPORTS_MESH = False


def signature(task: Task, case: Case, assignment: str = "", salt: str = "") -> StepSig:
    """The mesh that a training step is exported for."""
    return {"kind": "train_step", "function": task.name, "assignment": assignment, "mesh": case.mesh}


def step_inputs_structs(given: Training, mesh: Any) -> tuple[Any, list[Any], dict[str, Any], Any]:
    """The state's tree, and abstract leaves, batch and key for exporting a training step."""
    import jax

    leaves, treedef = jax.tree.flatten(given.init_state(0))
    everywhere, by_example = jax.NamedSharding(mesh, jax.P()), jax.NamedSharding(mesh, jax.P(given.batch_axis))
    structs = [jax.ShapeDtypeStruct(np.shape(leaf), leaf.dtype, sharding=everywhere) for leaf in leaves]
    example = given.random_batch(np.random.default_rng(0))
    batch = {name: jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=by_example) for name, v in example.items()}
    key = jax.ShapeDtypeStruct((), key_dtype(), sharding=everywhere)
    return treedef, structs, batch, key


def flat_step(train_step: Callable[..., Any], treedef: Any) -> Callable[..., Any]:
    """``train_step`` on a flat list of state leaves: a signature any side can rebuild."""
    import jax

    def step(leaves: list[Any], batch: dict[str, Any], key: Any) -> tuple[list[Any], Any]:
        state, loss = train_step(jax.tree.unflatten(treedef, leaves), batch, key)
        return jax.tree.leaves(state), loss

    return step


def export_step(train_step: Callable[..., Any], sig: StepSig) -> bytes:
    """Serialized ``jax.export`` of the jitted flat step on the task's mesh."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    treedef, structs, batch, key = step_inputs_structs(given_for(sig), mesh)
    with jax.set_mesh(mesh):
        exported = jax.export.export(jax.jit(flat_step(train_step, treedef)))(structs, batch, key)
    return bytes(exported.serialize())


def in_sandbox(fn: Callable[..., Any], sig: StepSig, namespace: dict[str, Any]) -> bytes:
    return export_step(fn, sig)
