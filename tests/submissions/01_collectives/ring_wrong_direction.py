"""Off-by-one ring direction: blocks travel left but are filed as if they came from the right.

On an axis of size 2 left and right coincide, so only the hidden 2x4 case over 'x' comes out
right; structure is judged there and passes. ring_all_reduce inherits the bug.
"""

EXPECTED = {
    "ring_all_gather: values": 0,
    "ring_all_gather: hidden values": 0,
    "ring_all_reduce: values": 0,
    "ring_all_reduce: hidden values": 0,
}
REASONS = {
    "ring_all_gather: values": "wrong values on 8 of 8 devices",
    "ring_all_gather: hidden values": "wrong values on 8 of 8 devices",
    "ring_all_reduce: values": "wrong values on 8 of 8 devices",
    "ring_all_reduce: hidden values": "wrong values on 8 of 8 devices",
}


def ring_all_gather(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    left = [(i, (i - 1) % n) for i in range(n)]
    blocks = jnp.zeros((n,) + x.shape, x.dtype).at[me].set(x)
    block = x
    for step in range(1, n):
        block = jax.lax.ppermute(block, axis_name, left)
        blocks = blocks.at[(me - step) % n].set(block)
    return blocks.reshape((n * x.shape[0],) + x.shape[1:])
