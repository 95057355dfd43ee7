"""ring_all_reduce is jax.lax.psum: right values, but the collective the part forbids. It keeps
its values' points alone, half the part: its technique fails, and its traffic is not judged."""

EXPECTED = {
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_all_reduce: technique": "the compiled HLO contains all-reduce",
    "ring_all_reduce: communication": "not checked until the technique holds",
}


def ring_all_reduce(x, axis_name):
    return jax.lax.psum(x, axis_name)
