"""collective_matmul_allgather calls all_gather: right values and the same bytes, but no ring. It
keeps its values' points alone, half the part: its collectives fail, and its traffic is not judged."""

EXPECTED = {
    "collective_matmul_allgather: collectives": 0,
    "collective_matmul_allgather: communication": 0,
}
REASONS = {
    "collective_matmul_allgather: communication": "not checked until the collectives are right",
    "collective_matmul_allgather: collectives": "the compiled HLO contains all-gather (all_gather); collective_matmul_allgather may use only ppermute",
}


def collective_matmul_allgather(a, b, axis_name):
    return jax.lax.all_gather(a, axis_name, axis=0, tiled=True) @ b
