"""Prints a results record claiming full marks to stdout; stdout is never read as results, so
the key folded over a hard-coded axis loses what it always loses."""

EXPECTED = {
    "fold_rng_over_axis: values": 0,
    "fold_rng_over_axis: hidden values": 0,
}
MESSAGE_OF = {
    "fold_rng_over_axis: values": "Found an unbound axis name: i",
    "fold_rng_over_axis: hidden values": "Found an unbound axis name: i",
}
EXTRA_CELL = """import json
print(json.dumps({"version": 1, "score": 50, "max_score": 50, "status": "graded"}))"""


def fold_rng_over_axis(key, axis_name):
    return jax.random.fold_in(key, jax.lax.axis_index("i"))
