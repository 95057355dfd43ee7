"""A reduce-scatter that passes every device's whole array round the ring of neighbours, adds each
as it arrives, and keeps its own rows of the total: only ppermutes to neighbours and right values,
but each step sends a whole array where a ring reduce-scatter sends one block of partial sums, N
times the bytes: an all-reduce done the slow way, so it keeps the values alone (the all-reduce
built on it too)."""

EXPECTED = {
    "ring_reduce_scatter: technique": 0,
    "ring_reduce_scatter: communication": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_reduce_scatter: technique": "sends 8.00x the reference's bytes per device over 'i'",
    "ring_reduce_scatter: communication": "not checked until the technique holds",
    "ring_all_reduce: technique": "sends 4.50x the reference's bytes per device over 'i'",
    "ring_all_reduce: communication": "not checked until the technique holds",
}


def ring_reduce_scatter(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    total, passing = x, x
    for _ in range(1, n):
        passing = jax.lax.ppermute(passing, axis_name, right)
        total = total + passing
    rows = x.shape[0] // n
    return jax.lax.dynamic_slice_in_dim(total, me * rows, rows)
