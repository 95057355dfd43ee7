"""matmul_case3 that always all-reduces the partial sums: right values, one psum, but on the 2 x 4
mesh (A 16 x 8, B 8 x 12 over 4 devices) gathering both operands moves fewer bytes, since the
product is larger than the two operands together (2 mn > mk + kn)."""

EXPECTED = {
    "matmul_case3: communication": 0,
}
REASONS = {
    "matmul_case3: communication": "sends 1.71x the reference's bytes per device over 'y'",
}


def matmul_case3(a, b, axis_name):
    return jax.lax.psum(a @ b, axis_name)
