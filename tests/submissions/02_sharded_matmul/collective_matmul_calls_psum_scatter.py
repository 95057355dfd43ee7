"""collective_matmul_reduce_scatter multiplies, then calls psum_scatter: right values and the same
bytes, but the collective the part replaces with a ring. It keeps its values' points alone, half
the part: its technique fails, and its traffic is not judged."""

EXPECTED = {
    "collective_matmul_reduce_scatter: technique": 0,
    "collective_matmul_reduce_scatter: communication": 0,
}
REASONS = {
    "collective_matmul_reduce_scatter: technique": "the compiled HLO contains reduce-scatter",
    "collective_matmul_reduce_scatter: communication": "not checked until the technique holds",
}


def collective_matmul_reduce_scatter(a, b, axis_name):
    return jax.lax.psum_scatter(a @ b, axis_name, scatter_dimension=0, tiled=True)
