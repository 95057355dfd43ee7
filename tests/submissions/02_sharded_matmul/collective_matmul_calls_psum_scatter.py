"""collective_matmul_reduce_scatter multiplies, then calls psum_scatter: right values and the same
bytes, but the collective the part replaces with a ring. It keeps its values' points alone, half
the part: its collectives fail, and its traffic is not judged."""

EXPECTED = {
    "collective_matmul_reduce_scatter: collectives": 0,
    "collective_matmul_reduce_scatter: communication": 0,
}
REASONS = {
    "collective_matmul_reduce_scatter: collectives": "the compiled HLO contains reduce-scatter (psum_scatter); collective_matmul_reduce_scatter may use only ppermute",
    "collective_matmul_reduce_scatter: communication": "not checked until the collectives are right",
}


def collective_matmul_reduce_scatter(a, b, axis_name):
    return jax.lax.psum_scatter(a @ b, axis_name, scatter_dimension=0, tiled=True)
