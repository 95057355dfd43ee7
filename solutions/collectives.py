"""Reference solutions for 01_collectives, the hidden cases the grader adds, and the closed forms
(TARGETS) that bound each part's traffic.

Each function body here is the single source of the matching solution region in
assignments/source/01_collectives/01_collectives.ipynb (tests/specs/test_solutions_sync.py checks it).
"""

from math import prod

import jax
import jax.numpy as jnp

from autograder.core.tasks import Case, Targets, at_dtype


def local_shape(global_shape, spec, mesh_shape):
    entries = tuple(spec)
    if len(entries) > len(global_shape):
        raise ValueError(f"spec {spec} has more entries than the array has dimensions")
    entries += (None,) * (len(global_shape) - len(entries))
    shape = []
    for size, entry in zip(global_shape, entries):
        names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        parts = prod(mesh_shape[name] for name in names)
        if size % parts:
            raise ValueError(f"dimension of size {size} does not split into {parts} equal parts")
        shape.append(size // parts)
    return tuple(shape)


def ring_all_gather(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    blocks = jnp.zeros((n,) + x.shape, x.dtype).at[me].set(x)
    block = x
    for step in range(1, n):
        block = jax.lax.ppermute(block, axis_name, right)  # now holds device (me - step)'s block
        blocks = blocks.at[(me - step) % n].set(block)
    return blocks.reshape((n * x.shape[0],) + x.shape[1:])


def ring_reduce_scatter(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    blocks = x.reshape((n, x.shape[0] // n) + x.shape[1:])
    partial = blocks[(me - 1) % n]
    for step in range(1, n):
        partial = jax.lax.ppermute(partial, axis_name, right)
        partial = partial + blocks[(me - 1 - step) % n]
    return partial


def ring_all_reduce(x, axis_name):
    return ring_all_gather(ring_reduce_scatter(x, axis_name), axis_name)


def sharded_layernorm(x, axis_name, eps=1e-5):
    features = x.shape[1] * jax.lax.axis_size(axis_name)
    xf = x.astype(jnp.float32)
    mean = jax.lax.psum(xf.sum(axis=1, keepdims=True), axis_name) / features
    centred = xf - mean
    var = jax.lax.psum((centred**2).sum(axis=1, keepdims=True), axis_name) / features
    return (centred * jax.lax.rsqrt(var + eps)).astype(x.dtype)


def fold_rng_over_axis(key, axis_name):
    return jax.random.fold_in(key, jax.lax.axis_index(axis_name))


HIDDEN_CASES = {
    "local_shape": tuple(
        Case(args=args)
        for args in (
            ([7, 16], {"P": [None, ["x", "y"]]}, {"x": 2, "y": 4}),
            ([6, 8, 2], {"P": [None, "y"]}, {"x": 3, "y": 4}),
            ([4], {"P": []}, {"i": 8}),
            ([9, 4], {"P": [["x", "y"]]}, {"x": 3, "y": 3}),
            ([8, 6], {"P": [None, ["x", "y"]]}, {"x": 2, "y": 2}),  # 6 over 4 devices: ValueError
        )
    ),
    "ring_all_gather": (
        Case("4x2:x,y", "x", ((1, 5),), "bfloat16"),
        Case("2x4:x,y", "x", ((4, 2, 2),), "float32"),
    ),
    "ring_reduce_scatter": (
        Case("4x2:x,y", "x", ((8, 3),), "bfloat16"),
        Case("2x4:x,y", "x", ((6,),), "float32"),
    ),
    "ring_all_reduce": (
        Case("4x2:x,y", "x", ((4, 2),), "bfloat16"),
        Case("2x4:x,y", "x", ((2, 3),), "int32"),
    ),
    "sharded_layernorm": (
        Case("4x2:x,y", "x", ((2, 16),), "bfloat16"),
        Case("2x4:x,y", "x", ((3, 6),), "float32", kwargs=(("eps", 1e-3),)),
    ),
    "fold_rng_over_axis": (
        Case("4x2:x,y", "x", ((),), "key"),
        Case("2x4:x,y", "x", ((),), "key"),
    ),
}


# The least each ring sends, counted in values per device and taken to bytes at the case's dtype
# (the wire may widen a type; the program's own dtype is what counts).


def _values(case):
    return prod(case.shapes[0])


def _axis_size(case):
    return case.mesh_spec.axis_sizes[case.axis]


def _all_gather_values(case):
    # Every device must receive the N-1 blocks it lacks; a ring sends as many as it receives.
    return (_axis_size(case) - 1) * _values(case)


def _reduce_scatter_values(case):
    n = _axis_size(case)
    return (n - 1) / n * _values(case)


def _all_reduce_values(case):
    return 2 * _reduce_scatter_values(case)


def _layernorm_bytes(case):
    # Two statistics per row, all-reduced: 2 (N-1)/N of 2 x batch values, in float32 whatever x's dtype.
    n = _axis_size(case)
    return 2 * (n - 1) / n * 2 * case.shapes[0][0] * 4


TARGETS = {
    "ring_all_gather": Targets(comm_bytes=at_dtype(_all_gather_values)),
    "ring_reduce_scatter": Targets(comm_bytes=at_dtype(_reduce_scatter_values)),
    "ring_all_reduce": Targets(comm_bytes=at_dtype(_all_reduce_values)),
    "sharded_layernorm": Targets(comm_bytes=_layernorm_bytes),
}
