"""matmul_case2 that always gathers A, lecture 5's first plan, whatever the sizes: right values and
the bytes of a gather, but on the ring of 2 (A 6 x 10, B 10 x 4) all-reducing the partial sums
moves fewer bytes (2 n < k), and the part is about choosing."""

EXPECTED = {
    "matmul_case2: communication": 0,
}
REASONS = {
    "matmul_case2: communication": "sends 1.25x the reference's bytes per device over 'i'",
}


def matmul_case2(a, b, axis_name):
    return jax.lax.all_gather(a, axis_name, axis=1, tiled=True, to="invarying") @ b
