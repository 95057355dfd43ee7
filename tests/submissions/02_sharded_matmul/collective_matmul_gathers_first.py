"""A "collective" matmul that passes every block round the ring first and multiplies once at the
end: right values, N - 1 ppermutes to neighbours, the bytes of an all-gather, and no overlap at
all: its one matmul waits for every transfer, which is what the ring was for. Overlap is what the
part teaches: without it the collectives fail and the traffic is not judged, and the values keep
half the part."""

EXPECTED = {
    "collective_matmul_allgather: collectives": 0,
    "collective_matmul_allgather: communication": 0,
}
REASONS = {
    "collective_matmul_allgather: communication": "not checked until the collectives are right",
    "collective_matmul_allgather: collectives": "computes nothing while the blocks travel: a ring of 8 overlaps its transfers with 8 partial matmuls, the one of step s waiting only for the s blocks that have arrived; this program's matmuls wait for 7 transfers",
}


def collective_matmul_allgather(a, b, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    blocks = jnp.zeros((n,) + a.shape, a.dtype).at[me].set(a)
    block = a
    for step in range(1, n):
        block = jax.lax.ppermute(block, axis_name, right)
        blocks = blocks.at[(me - step) % n].set(block)
    return blocks.reshape(n * a.shape[0], a.shape[1]) @ b
