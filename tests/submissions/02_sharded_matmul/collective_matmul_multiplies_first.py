"""A ring reduce-scatter matmul that computes its whole partial product first, then passes row
blocks of it round the ring of neighbours, adding its own as they arrive; a dummy matmul per step
on a sliver of the block that arrived feigns the overlap. Right values, the ring's ppermutes and
bytes; but the whole partial product of C sits on every device, which the hidden case with a tall
C shows at its peak: it keeps the values alone."""

EXPECTED = {
    "collective_matmul_reduce_scatter: technique": 0,
    "collective_matmul_reduce_scatter: communication": 0,
}
REASONS = {
    "collective_matmul_reduce_scatter: technique": "needs 1.61x the reference's memory per device at its peak",
    "collective_matmul_reduce_scatter: communication": "not checked until the technique holds",
}


def collective_matmul_reduce_scatter(a, b, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    rows = a.shape[0] // n
    product = a @ b  # every row block's term at once
    term = lambda chunk: jax.lax.dynamic_slice_in_dim(product, chunk * rows, rows, axis=0)
    partial, dummy = term((me - 1) % n), jnp.zeros((1, 1), a.dtype)
    for step in range(1, n):
        partial = jax.lax.ppermute(partial, axis_name, right)
        dummy = dummy + partial[:1, :1] @ b[:1, :1]
        partial = partial + term((me - 1 - step) % n)
    return partial + 0 * dummy
