"""The shard_map kind: a task case as a signature (no values), the wrapper that calls the
student's function under ``jax.shard_map`` on the task's mesh, and its ``jax.export`` artifact.

The sandbox (export), the trusted side (the reference run) and the notebooks' self-checks all
wrap a function here, so it is called identically wherever it runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import pspec
from ..core.errors import JaxcourseError
from ..core.mesh import MeshSpec
from ..core.records import InputSig, ShardedStepSig, ShardMapSig
from ..core.tasks import Case, Task

if TYPE_CHECKING:
    from jax.stages import Wrapped

REPORTS_MESH = True  # the runner reports the mesh it exported on; the trusted side compares


def signature(task: Task, case: Case, assignment: str = "", salt: str = "") -> ShardMapSig:
    """Everything needed to call ``task`` on ``case`` except the input values."""
    mesh = case.mesh_spec
    out_spec = None if task.out_layout is None else pspec.to_json(task.out_layout.spec(mesh, case.axis))
    return {
        "kind": "shard_map",
        "function": task.name,
        "mesh": case.mesh,
        "axis": case.axis,
        "inputs": input_sigs(task, case),
        "out_spec": out_spec,
        "kwargs": dict(case.kwargs),
        "differentiate": case.differentiate,
    }


def input_sigs(task: Task, case: Case) -> list[InputSig]:
    """Each input's global shape, dtype, sharding and draw, from the case's per-device shapes."""
    mesh = case.mesh_spec
    shapes = [
        inp.layout.global_shape(tuple(shape), mesh, case.axis)
        for inp, shape in zip(task.inputs, case.shapes, strict=True)
    ]
    return [
        {
            "shape": list(shape),
            "dtype": inp.dtype or case.dtype,
            "spec": pspec.to_json(inp.layout.spec(mesh, case.axis)),
            "draw": inp.drawn(shapes),
        }
        for inp, shape in zip(task.inputs, shapes, strict=True)
    ]


def jax_dtype(name: str) -> Any:
    import jax.numpy as jnp

    return key_dtype() if name == "key" else jnp.dtype(name)


@functools.cache
def key_dtype() -> Any:
    """The dtype of JAX's default PRNG keys, from a key traced, never made: making one with
    ``jax.random.key`` compiles two small programs in a process that has not yet."""
    import jax

    return jax.eval_shape(lambda: jax.random.key(0)).dtype


def build(fn: Callable[..., Any], sig: ShardMapSig) -> tuple[Wrapped, list[Any], Any]:
    """The jitted shard_map of ``fn`` for ``sig``, its argument structs and its mesh."""
    import jax

    mesh = MeshSpec.parse(sig["mesh"]).build()
    axis, kwargs = sig["axis"], sig["kwargs"]
    in_specs = tuple(pspec.from_json(i["spec"]) for i in sig["inputs"])
    axis_args = (axis,) if axis is not None else ()

    def call(*xs: Any) -> Any:
        return fn(*xs, *axis_args, **kwargs)

    out_spec = sig["out_spec"]
    if out_spec is None:
        # Per-device results: a new leading dimension over every axis, so no device's value is lost.
        out_specs = jax.P(tuple(mesh.axis_names))

        def body(*xs: Any) -> Any:
            return jax.tree.map(lambda out: out[None], call(*xs))
    else:
        out_specs = pspec.from_json(out_spec)

        def body(*xs: Any) -> Any:
            out = call(*xs)
            _check_invariance(out, out_specs, sig["function"])
            return out

    mapped = jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
    wrapped = jax.jit(_gradient(mapped) if sig.get("differentiate") else mapped)
    return wrapped, arg_structs(sig, mesh), mesh


def arg_structs(sig: ShardMapSig | ShardedStepSig, mesh: Any) -> list[Any]:
    """Each input's shape, dtype and sharding on ``mesh``: what a program is lowered for."""
    import jax
    from jax.sharding import NamedSharding

    return [
        jax.ShapeDtypeStruct(
            tuple(i["shape"]), jax_dtype(i["dtype"]), sharding=NamedSharding(mesh, pspec.from_json(i["spec"]))
        )
        for i in sig["inputs"]
    ]


def _gradient(mapped: Callable[..., Any]) -> Callable[..., Any]:
    """The gradient of half the output's squared norm w.r.t. the first input: the backward pass
    of ``mapped`` with its own output as the cotangent, so the forward pass runs too."""
    import jax
    import jax.numpy as jnp

    return jax.grad(lambda *xs: 0.5 * jnp.sum(jnp.square(mapped(*xs))))


class OutputShardingError(JaxcourseError, ValueError):
    """The result varies along an axis that the task's output sharding says it is the same on."""

    def __init__(self, message: str, varying: list[str]) -> None:
        super().__init__(message)
        self.varying = varying  # the axes, for the feedback's picture


def _check_invariance(out: Any, out_specs: Any, function: str) -> None:
    """Say in the task's terms what shard_map's check_vma would refuse: an output spec that leaves
    an axis out promises one value along it, and JAX must be able to see that it is one value."""
    import jax

    named = {n for entry in out_specs if entry for n in ((entry,) if isinstance(entry, str) else entry)}
    # JAX 0.10 keeps the varying axes on the type's `mat`; should that move, shard_map's own
    # (wordier) check still refuses the output.
    varying = sorted(getattr(getattr(jax.typeof(out), "mat", None), "varying", frozenset()) - named)
    if varying:
        axes = ", ".join(repr(a) for a in varying)
        raise OutputShardingError(
            f"the task's output sharding is {out_specs}, so {function}'s result must be the same on "
            f"every device along {axes}; the value returned varies along {axes} (its type is "
            f"{jax.typeof(out)}). Even when the values agree, JAX must know it: the result of psum, "
            f"or of all_gather(..., to='invarying'), is the same on every device",
            [str(a) for a in varying],
        )


def expected_out_spec(sig: ShardMapSig, mesh: Any) -> pspec.SpecJSON:
    if sig.get("differentiate"):  # a gradient lives where its input does
        return sig["inputs"][0]["spec"]
    if sig["out_spec"] is None:
        return [list(mesh.axis_names)]
    return sig["out_spec"]


def export(fn: Callable[..., Any], sig: ShardMapSig) -> bytes:
    """Serialized ``jax.export`` artifact of the wrapped function: an array program, no Python."""
    import jax

    wrapped, structs, mesh = build(fn, sig)
    with jax.set_mesh(mesh):  # the task's mesh, whatever the notebook set globally
        return bytes(jax.export.export(wrapped)(*structs).serialize())


def in_sandbox(fn: Callable[..., Any], sig: ShardMapSig, namespace: dict[str, Any]) -> bytes:
    return export(fn, sig)
