"""collective_matmul_allgather calls all_gather: right values and the same bytes, but no ring. It
keeps its values' points alone, half the part: its technique fails, and its traffic is not judged."""

EXPECTED = {
    "collective_matmul_allgather: technique": 0,
    "collective_matmul_allgather: communication": 0,
}
REASONS = {
    "collective_matmul_allgather: technique": "the compiled HLO contains all-gather",
    "collective_matmul_allgather: communication": "not checked until the technique holds",
}


def collective_matmul_allgather(a, b, axis_name):
    return jax.lax.all_gather(a, axis_name, axis=0, tiled=True) @ b
