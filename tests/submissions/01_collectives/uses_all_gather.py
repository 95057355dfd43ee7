"""Calls jax.lax.all_gather inside ring_all_gather: right values, forbidden collective."""

EXPECTED = {
    "ring_all_gather: collectives": 0,
    "ring_all_reduce: collectives": 0,
}
REASONS = {
    "ring_all_gather: collectives": "the compiled HLO contains all-gather (all_gather); ring_all_gather may use only ppermute",
    "ring_all_reduce: collectives": "the compiled HLO contains all-gather (all_gather); ring_all_reduce may use only ppermute",
}


def ring_all_gather(x, axis_name):
    return jax.lax.all_gather(x, axis_name, tiled=True)
