"""matmul_reshard gathers A instead of B: that leaves columns of C, so it gathers C too and keeps
its rows. Right values and only all-gathers, but two of them where the plan runs one (of B), and
far more bytes: choosing the operand is the part, so it keeps its values alone."""

EXPECTED = {
    "matmul_reshard: collectives": 0,
    "matmul_reshard: communication": 0,
}
REASONS = {
    "matmul_reshard: collectives": "the compiled HLO runs all-gather (all_gather) 2 times; matmul_reshard must run it 1 times on this mesh",
    "matmul_reshard: communication": "not checked until the collectives are right",
}


def matmul_reshard(a, b, axis_name):
    whole_a = jax.lax.all_gather(a, axis_name, axis=0, tiled=True)
    columns_of_c = whole_a @ b
    c = jax.lax.all_gather(columns_of_c, axis_name, axis=1, tiled=True)
    rows = a.shape[0]
    return jax.lax.dynamic_slice_in_dim(c, jax.lax.axis_index(axis_name) * rows, rows, axis=0)
