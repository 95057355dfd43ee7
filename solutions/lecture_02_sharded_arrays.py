"""Worked answers to the self-check exercises of course/02_sharded_arrays.ipynb."""

from itertools import product
from math import prod


def _entries(spec, ndim):
    """One tuple of mesh axis names per array dimension (a missing trailing entry is None)."""
    entries = list(spec) + [None] * (ndim - len(spec))
    return [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in entries]


def _block_range(size, axes, where, mesh_shape):
    """[start, stop) of the block that the device at `where` holds along a dimension of `size`."""
    parts = prod(mesh_shape[a] for a in axes)
    block = 0
    for a in axes:  # the first axis major
        block = block * mesh_shape[a] + where[a]
    return block * (size // parts), (block + 1) * (size // parts)


def _devices(mesh_shape):
    """Every device's coordinates, as {axis: position}, in mesh order."""
    names = list(mesh_shape)
    return [dict(zip(names, coords)) for coords in product(*(range(mesh_shape[n]) for n in names))]


def replication_factor(spec, mesh_shape):
    used = {name for names in _entries(spec, len(spec)) for name in names}
    return prod(size for name, size in mesh_shape.items() if name not in used)


def coords_holding_element(global_shape, spec, mesh_shape, index):
    held = []
    for where in _devices(mesh_shape):
        ranges = [_block_range(n, axes, where, mesh_shape) for n, axes in zip(global_shape, _entries(spec, len(global_shape)))]
        if all(start <= i < stop for (start, stop), i in zip(ranges, index)):
            held.append(tuple(where.values()))
    return held


def elements_received(global_shape, before, after, mesh_shape):
    most = 0
    for where in _devices(mesh_shape):
        have = [_block_range(n, axes, where, mesh_shape) for n, axes in zip(global_shape, _entries(before, len(global_shape)))]
        want = [_block_range(n, axes, where, mesh_shape) for n, axes in zip(global_shape, _entries(after, len(global_shape)))]
        kept = prod(max(0, min(h[1], w[1]) - max(h[0], w[0])) for h, w in zip(have, want))
        most = max(most, prod(stop - start for start, stop in want) - kept)  # what it lacks must arrive
    return most
