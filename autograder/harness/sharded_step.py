"""The sharded_step kind: a training step on pytrees of sharded arrays (parameters, optimizer
state, batch, key), exported through a flat wrapper: the leaves in, in the task's path order, and
the returned state's leaves and the loss out. Unlike shard_map tasks, the student's function is
jitted as it is, so the shardings of what it returns are its own: what each device holds at rest
after the step is part of the answer. So is what it donates: a step that jits with
``donate_argnums`` has the flat step donate the same leaves, and the artifact says so (its arguments' aliasing), so
that the trusted side runs it donated and reads its peak memory as the student's program has it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import pspec
from ..core.mesh import MeshSpec
from ..core.records import ShardedStepSig
from ..core.tasks import Case, Task
from .shard_map import input_sigs, jax_dtype

if TYPE_CHECKING:
    from jax.stages import Wrapped

REPORTS_MESH = True  # the runner reports the mesh it exported on; the trusted side compares


def signature(task: Task, case: Case, assignment: str = "", salt: str = "") -> ShardedStepSig:
    """The step's inputs (paths, global shapes, dtypes, shardings) on the case's mesh; no values."""
    step = task.step_args()
    return {
        "kind": "sharded_step",
        "function": task.name,
        "mesh": case.mesh,
        "paths": list(step.paths),
        "inputs": input_sigs(task, case),
        "returns": list(step.returned()),
    }


def arguments(paths: list[str], leaves: list[Any]) -> list[Any]:
    """The step's arguments, nested dicts built from each leaf's path, in the paths' order."""
    args: dict[str, Any] = {}
    for path, leaf in zip(paths, leaves, strict=True):
        *parents, last = path.split("/")
        if not parents:
            args[last] = leaf
            continue
        node = args.setdefault(parents[0], {})
        for name in parents[1:]:
            node = node.setdefault(name, {})
        node[last] = leaf
    return list(args.values())


def _leaf(returned: Any, path: str, arg_names: list[str]) -> Any:
    """The leaf at ``path`` of what the step returned for the argument the path starts with."""
    first, *rest = path.split("/")
    node = returned[arg_names.index(first)]
    for name in rest:
        node = node[name]
    return node


def flat(fn: Callable[..., Any], sig: ShardedStepSig) -> Callable[..., list[Any]]:
    """``fn`` on the flat list of leaves: the returned state's leaves, then the loss."""
    arg_names = list(dict.fromkeys(path.split("/")[0] for path in sig["returns"]))

    def step(*leaves: Any) -> list[Any]:
        *state, loss = fn(*arguments(sig["paths"], list(leaves)))
        return [_leaf(state, path, arg_names) for path in sig["returns"]] + [loss]

    return step


def donated(fn: Callable[..., Any], sig: ShardedStepSig, structs: list[Any]) -> tuple[int, ...]:
    """The flat step's positions of the leaves ``fn`` donates: the step's own inputs that a jit
    called at the top of ``fn`` (``fn`` itself, or one it calls) takes with ``donate_argnums``.
    Nested inside the flat step's jit a donation is void, so it is read from ``fn`` traced alone."""
    import jax

    args = arguments(sig["paths"], structs)
    traced = jax.make_jaxpr(fn)(*args).jaxpr
    donors = {
        var for eqn in traced.eqns for var, gives in zip(eqn.invars, eqn.params.get("donated_invars", ())) if gives
    }
    arg_names = list(dict.fromkeys(path.split("/")[0] for path in sig["paths"]))
    leaves = jax.tree_util.tree_flatten_with_path(args)[0]
    given = {
        "/".join([arg_names[keys[0].idx], *(str(getattr(k, "key", k)) for k in keys[1:])])
        for (keys, _), var in zip(leaves, traced.invars)
        if var in donors
    }
    return tuple(i for i, path in enumerate(sig["paths"]) if path in given)


def build(fn: Callable[..., Any], sig: ShardedStepSig) -> tuple[Wrapped, list[Any], Any]:
    """The jitted flat step of ``fn`` (donating what ``fn`` donates), its argument structs
    (placed at rest) and its mesh."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    structs = [
        jax.ShapeDtypeStruct(
            tuple(i["shape"]), jax_dtype(i["dtype"]), sharding=jax.NamedSharding(mesh, pspec.from_json(i["spec"]))
        )
        for i in sig["inputs"]
    ]
    with jax.set_mesh(mesh):  # a step jitted with specs alone resolves them against the task's mesh
        donate = donated(fn, sig, structs)
    return jax.jit(flat(fn, sig), donate_argnums=donate), structs, mesh


def in_sandbox(fn: Callable[..., Any], sig: ShardedStepSig, namespace: dict[str, Any]) -> bytes:
    """Serialized ``jax.export`` artifact of the flat step on the task's mesh."""
    import jax

    wrapped, structs, mesh = build(fn, sig)
    with jax.set_mesh(mesh):  # the task's mesh, whatever the notebook set globally
        return bytes(jax.export.export(wrapped)(*structs).serialize())
