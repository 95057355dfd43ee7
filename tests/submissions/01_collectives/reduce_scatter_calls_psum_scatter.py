"""Calls jax.lax.psum_scatter inside ring_reduce_scatter: right values, but the collective the
part forbids. It keeps its values' points alone (half the part), here and in ring_all_reduce,
which is built on it: its technique fails, and its traffic is not judged."""

EXPECTED = {
    "ring_reduce_scatter: technique": 0,
    "ring_reduce_scatter: communication": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_reduce_scatter: technique": "the compiled HLO contains reduce-scatter",
    "ring_reduce_scatter: communication": "not checked until the technique holds",
    "ring_all_reduce: technique": "the compiled HLO contains reduce-scatter",
    "ring_all_reduce: communication": "not checked until the technique holds",
}


def ring_reduce_scatter(x, axis_name):
    return jax.lax.psum_scatter(x, axis_name, tiled=True)
