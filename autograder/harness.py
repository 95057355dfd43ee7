"""Turns a task case into a call: a JSON signature (no values), the shard_map wrapper, its export.

The sandbox, the trusted evaluator and the notebooks' self-checks all build calls here, so a
function is wrapped identically wherever it runs.
"""

from __future__ import annotations

from typing import Any, Callable

from .mesh import MeshSpec
from .tasks import Case, Task

Signature = dict[str, Any]


def signature(task: Task, case: Case) -> Signature:
    """Everything needed to call ``task`` on ``case`` except the input values."""
    if task.kind == "python":
        return {"kind": "python", "function": task.name, "args": list(case.args)}
    if task.kind in ("training", "train_step"):
        from .training import signature as training_signature

        return training_signature(task, case)
    mesh = case.mesh_spec
    inputs = [
        {
            "shape": list(inp.layout.global_shape(tuple(shape), mesh, case.axis)),
            "dtype": case.dtype,
            "spec": spec_to_json(inp.layout.spec(mesh, case.axis)),
            "draw": inp.draw,
        }
        for inp, shape in zip(task.inputs, case.shapes, strict=True)
    ]
    out_spec = None
    if task.out_layout is not None:
        out_spec = spec_to_json(task.out_layout.spec(mesh, case.axis))
    return {
        "kind": "shard_map",
        "function": task.name,
        "mesh": case.mesh,
        "axis": case.axis,
        "inputs": inputs,
        "out_spec": out_spec,
        "kwargs": dict(case.kwargs),
    }


def spec_to_json(spec: tuple[Any, ...]) -> list[Any]:
    return [list(e) if isinstance(e, tuple) else e for e in spec]


def spec_from_json(entries: list[Any]) -> "jax.sharding.PartitionSpec":
    import jax

    return jax.P(*(tuple(e) if isinstance(e, list) else e for e in entries))


def decode_arg(arg: Any) -> Any:
    """Plain-Python task arguments: ``{"P": [...]}`` stands for a PartitionSpec."""
    if isinstance(arg, dict) and set(arg) == {"P"}:
        return spec_from_json(arg["P"])
    return arg


def jax_dtype(name: str) -> Any:
    import jax
    import jax.numpy as jnp

    if name == "key":
        return jax.random.key(0).dtype
    return jnp.dtype(name)


def build(fn: Callable[..., Any], sig: Signature) -> tuple[Callable[..., Any], list[Any], Any]:
    """The jitted shard_map of ``fn`` for ``sig``, its argument structs and its mesh."""
    import jax
    from jax.sharding import NamedSharding

    mesh = MeshSpec.parse(sig["mesh"]).build()
    axis, kwargs = sig["axis"], sig["kwargs"]
    in_specs = tuple(spec_from_json(i["spec"]) for i in sig["inputs"])
    axis_args = (axis,) if axis is not None else ()

    def call(*xs: Any) -> Any:
        return fn(*xs, *axis_args, **kwargs)

    if sig["out_spec"] is None:
        # Per-device results: a new leading dimension over every axis, so no device's value is lost.
        out_specs = jax.P(tuple(mesh.axis_names))

        def body(*xs: Any) -> Any:
            return jax.tree.map(lambda out: out[None], call(*xs))
    else:
        out_specs = spec_from_json(sig["out_spec"])

        def body(*xs: Any) -> Any:
            out = call(*xs)
            _check_invariance(out, out_specs, mesh, sig["function"])
            return out
    wrapped = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs))
    structs = [
        jax.ShapeDtypeStruct(
            tuple(i["shape"]), jax_dtype(i["dtype"]), sharding=NamedSharding(mesh, spec)
        )
        for i, spec in zip(sig["inputs"], in_specs)
    ]
    return wrapped, structs, mesh


class OutputShardingError(ValueError):
    """The result varies along an axis that the task's output sharding says it is the same on."""

    def __init__(self, message: str, varying: list[str]) -> None:
        super().__init__(message)
        self.varying = varying  # the axes, for the feedback's picture


def _check_invariance(out: Any, out_specs: Any, mesh: Any, function: str) -> None:
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


def expected_out_spec(sig: Signature, mesh: Any) -> list[Any]:
    if sig["out_spec"] is None:
        return [list(mesh.axis_names)]
    return sig["out_spec"]


def export(fn: Callable[..., Any], sig: Signature) -> bytes:
    """Serialized ``jax.export`` artifact of the wrapped function: an array program, no Python."""
    import jax

    wrapped, structs, mesh = build(fn, sig)
    with jax.set_mesh(mesh):  # the task's mesh, whatever the notebook set globally
        return bytes(jax.export.export(wrapped)(*structs).serialize())


def call_python(fn: Callable[..., Any], sig: Signature) -> dict[str, Any]:
    """Call a plain-Python task; its return value or the exception it raised, as plain data."""
    try:
        value = fn(*(decode_arg(a) for a in sig["args"]))
    except Exception as err:  # the exception type is part of the answer
        return {"raises": type(err).__name__, "message": str(err)[:300]}
    return {"value": to_plain(value)}


def to_plain(value: Any) -> Any:
    """JSON-safe data; tuples become lists, anything exotic becomes its repr."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    import numpy as np

    if isinstance(value, (np.ndarray, np.generic)):
        return to_plain(value.tolist())
    return {"repr": repr(value)[:200]}
