"""A "ring" all-gather that passes its whole buffer of N blocks to its neighbour at every step,
filling in each block it did not have: only ppermutes to neighbours and right values, but every
step sends N blocks where a ring sends one, N times the bytes (8x on the ring of 8): whole arrays
where a ring passes blocks, so it keeps its values alone (and ring_all_reduce, built on it, too)."""

EXPECTED = {
    "ring_all_gather: technique": 0,
    "ring_all_gather: communication": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_all_gather: technique": "sends 8.00x the reference's bytes per device over 'i'",
    "ring_all_gather: communication": "not checked until the technique holds",
    "ring_all_reduce: technique": "sends 4.50x the reference's bytes per device over 'i'",
    "ring_all_reduce: communication": "not checked until the technique holds",
}
# At scale on 8 x H100 SXM: 8x the bytes over NVLink, 7.5x the time (4.72 ms against 0.632 ms).
AT_SCALE = {"ring_all_gather": 5.0}


def ring_all_gather(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    blocks = jnp.zeros((n,) + x.shape, x.dtype).at[me].set(x)
    for step in range(1, n):
        arrived = jax.lax.ppermute(blocks, axis_name, right)  # the left neighbour's blocks, all of them
        blocks = blocks.at[(me - step) % n].set(arrived[(me - step) % n])
    return blocks.reshape((n * x.shape[0],) + x.shape[1:])
