"""A "ring" all-gather of direct sends: in step k every device sends its own block k places on.
It uses only ppermute, N - 1 times, and sends as many values as a ring; but on a ring network the
send of step k crosses k links (the shorter way round), so the values cross more links than a
ring's neighbour sends: not a ring, so it keeps its values' points alone. ring_all_reduce gathers
with it and loses the same parts."""

EXPECTED = {
    "ring_all_gather: technique": 0,
    "ring_all_gather: communication": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_all_gather: technique": "sends to devices that are not its neighbours: a ppermute pair is 4 hops apart on the ring of 'i', so the 42 values it sends per device travel 96 value-hops",
    "ring_all_gather: communication": "not checked until the technique holds",
    "ring_all_reduce: technique": "sends to devices that are not its neighbours: a ppermute pair is 4 hops apart on the ring of 'i', so the 70 values it sends per device travel 115 value-hops",
    "ring_all_reduce: communication": "not checked until the technique holds",
}


def ring_all_gather(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    blocks = jnp.zeros((n,) + x.shape, x.dtype).at[me].set(x)
    for step in range(1, n):
        block = jax.lax.ppermute(x, axis_name, [(i, (i + step) % n) for i in range(n)])
        blocks = blocks.at[(me - step) % n].set(block)
    return blocks.reshape((n * x.shape[0],) + x.shape[1:])
