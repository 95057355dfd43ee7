"""matmul_reshard gathers A instead of B: that leaves columns of C, so it gathers C too and keeps
its rows. Right values and only all-gathers, but two of them where the plan runs one (of B), 6x
the plan's bytes on the visible ring of 8: choosing the operand is the part, so it keeps its
values alone."""

EXPECTED = {
    "matmul_reshard: technique": 0,
    "matmul_reshard: communication": 0,
}
REASONS = {
    "matmul_reshard: technique": "sends 6.00x the reference's bytes per device over 'i'",
    "matmul_reshard: communication": "not checked until the technique holds",
}


def matmul_reshard(a, b, axis_name):
    whole_a = jax.lax.all_gather(a, axis_name, axis=0, tiled=True)
    columns_of_c = whole_a @ b
    c = jax.lax.all_gather(columns_of_c, axis_name, axis=1, tiled=True)
    rows = a.shape[0]
    return jax.lax.dynamic_slice_in_dim(c, jax.lax.axis_index(axis_name) * rows, rows, axis=0)
