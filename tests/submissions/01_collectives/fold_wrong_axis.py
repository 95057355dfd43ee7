"""fold_in over a hard-coded axis 'i' instead of the axis it is given: right on 8:i only."""

EXPECTED = {
    "fold_rng_over_axis: values": 0,
    "fold_rng_over_axis: hidden values": 0,
}
REASONS = {
    "fold_rng_over_axis: values": "Found an unbound axis name: i",
    "fold_rng_over_axis: hidden values": "Found an unbound axis name: i",
}


def fold_rng_over_axis(key, axis_name):
    return jax.random.fold_in(key, jax.lax.axis_index("i"))
