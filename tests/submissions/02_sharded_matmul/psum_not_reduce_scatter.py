"""matmul_reduce_scatter all-reduces the partial sums and keeps its own rows: right values, the
wrong collective, twice the bytes."""

EXPECTED = {
    "matmul_reduce_scatter: collectives": 0,
    "matmul_reduce_scatter: communication": 0,
}
REASONS = {
    "matmul_reduce_scatter: collectives": "all-reduce (psum); matmul_reduce_scatter may use only psum_scatter",
    "matmul_reduce_scatter: communication": "sends 1792 bytes per device; the closed form for matmul_reduce_scatter is 896 bytes",
}


def matmul_reduce_scatter(a, b, axis_name):
    c = jax.lax.psum(a @ b, axis_name)
    rows = c.shape[0] // jax.lax.axis_size(axis_name)
    return jax.lax.dynamic_slice_in_dim(c, jax.lax.axis_index(axis_name) * rows, rows, axis=0)
