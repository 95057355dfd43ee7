"""Worked answers to the self-check exercises of course/01_devices_and_meshes.ipynb."""


def _shape(nested):
    """The shape of a rectangular nested list, such as ``mesh.device_ids.tolist()``."""
    shape = []
    while isinstance(nested, (list, tuple)):
        shape.append(len(nested))
        nested = nested[0]
    return shape


def _flat(nested):
    if not isinstance(nested, (list, tuple)):
        return [nested]
    return [leaf for item in nested for leaf in _flat(item)]


def axis_groups(device_ids, axis_names, axis):
    shape = _shape(device_ids)
    flat = _flat(device_ids)
    k = list(axis_names).index(axis)
    # Row-major strides: how far apart in `flat` two neighbours along each mesh axis sit.
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    groups = []
    for start, device in enumerate(flat):
        if (start // strides[k]) % shape[k] == 0:  # coordinate 0 along `axis`: a group starts here
            groups.append([flat[start + j * strides[k]] for j in range(shape[k])])
    return groups


def cross_process_axes(process_ids, axis_names):
    return [
        name
        for name in axis_names
        if any(len(set(group)) > 1 for group in axis_groups(process_ids, axis_names, name))
    ]
