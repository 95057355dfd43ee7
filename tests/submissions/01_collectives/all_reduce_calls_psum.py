"""ring_all_reduce is jax.lax.psum: right values, but the collective the part forbids. It keeps
its values' points alone, half the part: its collectives fail, and its traffic is not judged."""

EXPECTED = {
    "ring_all_reduce: collectives": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_all_reduce: collectives": "the compiled HLO contains all-reduce (psum); ring_all_reduce may use only ppermute",
    "ring_all_reduce: communication": "not checked until the collectives are right",
}


def ring_all_reduce(x, axis_name):
    return jax.lax.psum(x, axis_name)
