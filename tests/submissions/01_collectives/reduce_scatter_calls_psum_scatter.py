"""Calls jax.lax.psum_scatter inside ring_reduce_scatter: right values, but the collective the
part forbids. It keeps its values' points alone (half the part), here and in ring_all_reduce,
which is built on it: its collectives fail, and its traffic is not judged."""

EXPECTED = {
    "ring_reduce_scatter: collectives": 0,
    "ring_reduce_scatter: communication": 0,
    "ring_all_reduce: collectives": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_reduce_scatter: collectives": "the compiled HLO contains reduce-scatter (psum_scatter); ring_reduce_scatter may use only ppermute",
    "ring_reduce_scatter: communication": "not checked until the collectives are right",
    "ring_all_reduce: collectives": "the compiled HLO contains reduce-scatter (psum_scatter); ring_all_reduce may use only ppermute",
    "ring_all_reduce: communication": "not checked until the collectives are right",
}


def ring_reduce_scatter(x, axis_name):
    return jax.lax.psum_scatter(x, axis_name, tiled=True)
