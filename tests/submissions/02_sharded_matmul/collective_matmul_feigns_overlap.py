"""The collective matmul that gathers first (``collective_matmul_gathers_first``), with a dummy
matmul per step on a sliver of the block that just arrived, multiplied by zero at the end, so that
some matmul waits for each transfer as an overlapped ring's does. Right values, the ring's
ppermutes and bytes; but it still holds all of A before it multiplies, which the hidden case with
a long k shows at its peak: it keeps the values alone."""

EXPECTED = {
    "collective_matmul_allgather: technique": 0,
    "collective_matmul_allgather: communication": 0,
}
REASONS = {
    "collective_matmul_allgather: technique": "needs 2.94x the reference's memory per device at its peak",
    "collective_matmul_allgather: communication": "not checked until the technique holds",
}


def collective_matmul_allgather(a, b, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    blocks = jnp.zeros((n,) + a.shape, a.dtype).at[me].set(a)
    block, dummy = a, jnp.zeros((1, 1), a.dtype)
    for step in range(n):
        dummy = dummy + block[:1, :1] @ b[:1, :1]  # a matmul that waits for this step's block
        if step < n - 1:
            block = jax.lax.ppermute(block, axis_name, right)
            blocks = blocks.at[(me - step - 1) % n].set(block)
    return blocks.reshape(n * a.shape[0], a.shape[1]) @ b + 0 * dummy
