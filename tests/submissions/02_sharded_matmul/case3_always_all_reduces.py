"""matmul_case3 that always all-reduces the partial sums: right values, one psum, but on the 2 x 4
mesh (A 16 x 8, B 8 x 12 over 4 devices) gathering both operands moves fewer bytes, since the
product is larger than the two operands together (2 mn > mk + kn)."""

EXPECTED = {
    "matmul_case3: communication": 0,
}
REASONS = {
    "matmul_case3: communication": "mesh 2x4:x,y, axis 'y', float32, (16, 2) (2, 12) per device: sends 1152 bytes per device; for these sizes the cheapest plan is matmul_gather_both, 672 bytes",
}


def matmul_case3(a, b, axis_name):
    return jax.lax.psum(a @ b, axis_name)
