"""local_shape that rounds down instead of raising ValueError when a dimension does not divide."""

EXPECTED = {
    "local_shape: values": 0,
    "local_shape: hidden values": 0,
}
REASONS = {
    "local_shape: values": "expected ValueError, but the function returned [2, 3]",
    "local_shape: hidden values": "expected ValueError, but the function returned [8, 1]",
}


def local_shape(global_shape, spec, mesh_shape):
    entries = tuple(spec) + (None,) * (len(global_shape) - len(tuple(spec)))
    shape = []
    for size, entry in zip(global_shape, entries):
        names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        shape.append(size // prod(mesh_shape[name] for name in names))
    return tuple(shape)
