"""matmul_reshard gathers A instead of B: that leaves columns of C, so it gathers C too and keeps
its rows. Right values and only all-gathers, but far more bytes than gathering B."""

EXPECTED = {
    "matmul_reshard: communication": 0,
}
REASONS = {
    "matmul_reshard: communication": "the closed form for matmul_reshard is 448 bytes, and the reference sends 448",
}


def matmul_reshard(a, b, axis_name):
    whole_a = jax.lax.all_gather(a, axis_name, axis=0, tiled=True)
    columns_of_c = whole_a @ b
    c = jax.lax.all_gather(columns_of_c, axis_name, axis=1, tiled=True)
    rows = a.shape[0]
    return jax.lax.dynamic_slice_in_dim(c, jax.lax.axis_index(axis_name) * rows, rows, axis=0)
