"""fold_rng_over_axis exports a program whose while loop never ends: only the trusted worker
can notice, by the clock. The case is blamed, the worker restarted, the rest measured."""

EXPECTED = {
    "fold_rng_over_axis: values": 0,
    "fold_rng_over_axis: hidden values": 0,
    "fold_rng_over_axis: technique": 0,
}
REASONS = {
    "fold_rng_over_axis: values": "the exported program did not finish",
    "fold_rng_over_axis: hidden values": "the exported program did not finish",
    "fold_rng_over_axis: technique": "not checked until the values are right on at least one case",
}


def fold_rng_over_axis(key, axis_name):
    i = jax.lax.while_loop(lambda i: i >= 0, lambda i: i + 1 - 1, jax.lax.axis_index(axis_name))
    return jax.random.fold_in(key, i)
