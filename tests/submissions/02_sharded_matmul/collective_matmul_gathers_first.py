"""A "collective" matmul that passes every block round the ring first and multiplies once at the
end: right values, N - 1 ppermutes to neighbours, the bytes of an all-gather; but it holds all of
A before it multiplies (2.4x the reference's memory at its peak), and its one matmul waits for
every transfer, which is what the ring was for. Not the technique: the values keep half the part,
and the traffic is not judged."""

EXPECTED = {
    "collective_matmul_allgather: technique": 0,
    "collective_matmul_allgather: communication": 0,
}
REASONS = {
    "collective_matmul_allgather: technique": "needs 2.39x the reference's memory per device at its peak",
    "collective_matmul_allgather: communication": "not checked until the technique holds",
}
# At scale on 8 x H100 SXM: its ring runs beside no matmul, so its time is the call, the links and
# then the compute, 1.33 ms, 1.43x the reference's 0.928 ms.
AT_SCALE = {"collective_matmul_allgather": 1.4}


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
