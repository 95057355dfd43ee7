"""Calls jax.lax.all_gather inside ring_all_gather: right values, but the collective the part
forbids. It keeps its values' points alone (half the part), here and in ring_all_reduce, which is
built on it: its technique fails, and its traffic is not judged."""

EXPECTED = {
    "ring_all_gather: technique": 0,
    "ring_all_gather: communication": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_all_gather: technique": "the compiled HLO contains all-gather",
    "ring_all_gather: communication": "not checked until the technique holds",
    "ring_all_reduce: technique": "the compiled HLO contains all-gather",
    "ring_all_reduce: communication": "not checked until the technique holds",
}


def ring_all_gather(x, axis_name):
    return jax.lax.all_gather(x, axis_name, tiled=True)
