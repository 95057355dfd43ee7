"""Part 5's broken decode step handed in as it was: its values are right, but its cache update
gathers every device's cache over `data` (an all-gather the part does not allow, sending and
holding N times a device's share) and its jit donates nothing. No technique."""

EXPECTED = {"fixed_decode_step: technique": 0}
REASONS = {"fixed_decode_step: technique": "the compiled HLO contains all-gather"}
# At scale on 8 x H100 SXM it projects 29.4x the reference's time (JAX 0.10.2): at least 15x.
AT_SCALE = {"fixed_decode_step": 15.0}


def fixed_decode_step(params, cache, x, pos):
    return broken_decode_step(params, cache, x, pos)
