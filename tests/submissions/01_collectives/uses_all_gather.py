"""Calls jax.lax.all_gather inside ring_all_gather: right values, but the collective the part
forbids. It keeps its values' points alone (half the part), here and in ring_all_reduce, which is
built on it: its collectives fail, and its traffic is not judged."""

EXPECTED = {
    "ring_all_gather: collectives": 0,
    "ring_all_gather: communication": 0,
    "ring_all_reduce: collectives": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_all_gather: communication": "not checked until the collectives are right",
    "ring_all_reduce: communication": "not checked until the collectives are right",
    "ring_all_gather: collectives": "the compiled HLO contains all-gather (all_gather); ring_all_gather may use only ppermute",
    "ring_all_reduce: collectives": "the compiled HLO contains all-gather (all_gather); ring_all_reduce may use only ppermute",
}


def ring_all_gather(x, axis_name):
    return jax.lax.all_gather(x, axis_name, tiled=True)
