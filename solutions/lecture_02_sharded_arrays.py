"""Worked answers to the self-check exercises of course/02_sharded_arrays.ipynb."""

from itertools import product
from math import prod

import jax.numpy as jnp


def _entries(spec, ndim):
    """One tuple of mesh axis names per array dimension (a missing trailing entry is None)."""
    entries = list(spec) + [None] * (ndim - len(spec))
    return [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in entries]


def bytes_held_per_device(global_shape, dtype, spec, mesh_shape):
    parts = prod(prod(mesh_shape[name] for name in names) for names in _entries(spec, len(global_shape)))
    return prod(global_shape) // parts * jnp.dtype(dtype).itemsize


def replication_factor(spec, mesh_shape):
    used = {name for names in _entries(spec, len(spec)) for name in names}
    return prod(size for name, size in mesh_shape.items() if name not in used)


def coords_holding_element(global_shape, spec, mesh_shape, index):
    names = list(mesh_shape)
    held = []
    for coords in product(*(range(mesh_shape[name]) for name in names)):
        where = dict(zip(names, coords))
        for size, i, axes in zip(global_shape, index, _entries(spec, len(global_shape))):
            parts = prod(mesh_shape[a] for a in axes)
            block = 0  # this device's block number along the dimension, the first axis major
            for a in axes:
                block = block * mesh_shape[a] + where[a]
            if i // (size // parts) != block:
                break
        else:
            held.append(coords)
    return held
