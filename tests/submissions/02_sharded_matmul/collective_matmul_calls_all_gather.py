"""collective_matmul_allgather calls all_gather: right values and the same bytes, but no ring."""

EXPECTED = {
    "collective_matmul_allgather: collectives": 0,
}
REASONS = {
    "collective_matmul_allgather: collectives": "the compiled HLO contains all-gather (all_gather); collective_matmul_allgather may use only ppermute",
}


def collective_matmul_allgather(a, b, axis_name):
    return jax.lax.all_gather(a, axis_name, axis=0, tiled=True) @ b
