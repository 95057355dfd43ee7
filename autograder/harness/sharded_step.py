"""The sharded_step kind: a training step on pytrees of sharded arrays (parameters, optimizer
state, batch, key), exported through a flat wrapper: the leaves in, in the task's path order, and
the returned state's leaves and the loss out. Unlike shard_map tasks, the student's function is
graded as her code runs it: what each device holds at rest after the step is part of the answer,
and so is what it donates.

The flat step is a jit around hers, and inside another jit a jit's ``out_shardings`` set no
result's type (in explicit mode the result follows the inputs), its ``in_shardings`` are no check,
and its ``donate_argnums`` donate nothing. So her step is traced once and replayed inside the flat
step as the top level runs it: each jit it calls at its top level refuses arguments placed otherwise
than its ``in_shardings`` say, as a top-level call does, and returns its results where its
``out_shardings`` say, so that what follows (and what the step returns) is laid out as at the top
level; and the flat step donates the leaves her own jit donates (the artifact says so, in its
arguments' aliasing), so that the trusted side runs it donated and reads its peak memory as her
program has it. Replaying costs a trace; calling her step at the top level would cost a compile
and a run of it on every case.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import pspec
from ..core.mesh import MeshSpec
from ..core.records import ShardedStepSig
from ..core.tasks import Case, Task
from .shard_map import arg_structs, input_sigs

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


def as_at_the_top_level(fn: Callable[..., Any], sig: ShardedStepSig, structs: list[Any]) -> Callable[..., list[Any]]:
    """The flat step of ``fn``, each jit ``fn`` calls at its top level behaving as at the top level:
    arguments checked against its ``in_shardings``, results resharded to its ``out_shardings``."""
    import jax
    from jax.extend.core import Literal

    closed = jax.make_jaxpr(flat(fn, sig))(*structs)

    def step(*leaves: Any) -> list[Any]:
        env: dict[Any, Any] = dict(zip(closed.jaxpr.constvars, closed.consts))
        env.update(zip(closed.jaxpr.invars, leaves))

        def read(var: Any) -> Any:
            return var.val if isinstance(var, Literal) else env[var]

        for eqn in closed.jaxpr.eqns:
            args = [read(var) for var in eqn.invars]
            if eqn.primitive.name == "jit":
                _check_placed(eqn, args)
            outs = _bind(eqn, args)
            if eqn.primitive.name == "jit":
                outs = [_placed(out, sharding) for out, sharding in zip(outs, eqn.params["out_shardings"])]
            env.update(zip(eqn.outvars, outs))
        return [read(var) for var in closed.jaxpr.outvars]

    return step


def _bind(eqn: Any, args: list[Any]) -> list[Any]:
    """One equation run on ``args``, as JAX's own ``eval_jaxpr`` runs it (its bind parameters,
    which JAX 0.10 gives alone and earlier versions beside sub-functions, in its context)."""
    bound = eqn.primitive.get_bind_params(eqn.params)
    subfuns, params = bound if isinstance(bound, tuple) else ((), bound)
    ctx = getattr(eqn, "ctx", None)
    with ctx.manager if ctx is not None else contextlib.nullcontext():
        outs = eqn.primitive.bind(*subfuns, *args, **params)
    return list(outs) if eqn.primitive.multiple_results else [outs]


def _check_placed(eqn: Any, args: list[Any]) -> None:
    """What a jit called at the top level does with an argument placed otherwise than its
    ``in_shardings`` say: refuse it (a nested jit would copy it silently)."""
    import jax

    for arg, sharding in zip(args, eqn.params["in_shardings"]):
        if not isinstance(sharding, jax.NamedSharding):
            continue
        given, taken = _spec(jax.typeof(arg).sharding.spec, arg.ndim), _spec(sharding.spec, arg.ndim)
        if given != taken:
            raise ValueError(
                f"Sharding passed to jit does not match the sharding on the respective arg: the jit of "
                f"{eqn.params['name']} takes {pspec.show(taken)} where the step is given {pspec.show(given)}; "
                "called at the top level, as the grader calls your step, JAX refuses it"
            )


def _spec(spec: Any, ndim: int) -> pspec.SpecJSON:
    return pspec.normalize(pspec.to_json(tuple(spec)), ndim)


def _placed(out: Any, sharding: Any) -> Any:
    """A jit's result where its ``out_shardings`` put it at the top level."""
    import jax

    return jax.reshard(out, sharding.spec) if isinstance(sharding, jax.NamedSharding) else out


def build(fn: Callable[..., Any], sig: ShardedStepSig) -> tuple[Wrapped, list[Any], Any]:
    """The jitted flat step of ``fn`` (as at the top level, donating what ``fn`` donates), its
    argument structs (placed at rest) and its mesh."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    structs = arg_structs(sig, mesh)
    with jax.set_mesh(mesh):  # a step jitted with specs alone resolves them against the task's mesh
        donate = donated(fn, sig, structs)
        step = as_at_the_top_level(fn, sig, structs)
    return jax.jit(step, donate_argnums=donate), structs, mesh


def in_sandbox(fn: Callable[..., Any], sig: ShardedStepSig, namespace: dict[str, Any]) -> bytes:
    """Serialized ``jax.export`` artifact of the flat step on the task's mesh."""
    import jax

    wrapped, structs, mesh = build(fn, sig)
    with jax.set_mesh(mesh):  # the task's mesh, whatever the notebook set globally
        return bytes(jax.export.export(wrapped)(*structs).serialize())
