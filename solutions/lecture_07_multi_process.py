"""Worked answers to the self-check exercises of course/07_multi_process.ipynb."""

from math import prod


def process_rows(global_batch, process_index, process_count):
    if global_batch % process_count:
        raise ValueError(f"{global_batch} rows cannot be split evenly over {process_count} processes")
    per_process = global_batch // process_count
    return [process_index * per_process, (process_index + 1) * per_process]


def shared_step_count(examples_per_process, local_batch):
    # Every process must make the same number of calls: as many as the poorest one can fill.
    return min(n // local_batch for n in examples_per_process)


def process_local_shape(global_shape, spec, mesh_shape, process_count):
    # A process owns a contiguous run of the mesh's devices in row-major order: a block of the
    # grid that is whole along the trailing axes and takes what is left of the next one.
    left = prod(mesh_shape.values()) // process_count
    extent = {}
    for name in reversed(list(mesh_shape)):
        extent[name] = min(mesh_shape[name], left)
        left //= extent[name]
    shape = []
    for dim, size in enumerate(global_shape):
        entry = spec[dim] if dim < len(spec) else None
        names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        # size / (blocks along this dimension) x (distinct blocks this process's devices hold)
        shape.append(size // prod(mesh_shape[n] for n in names) * prod(extent[n] for n in names))
    return shape
