"""A collective matmul whose "ring" fetches block s straight from device me - s: the same N - 1
ppermutes and bytes as the reference, but the send of step s crosses s links of the ring (the
shorter way round) instead of one."""

EXPECTED = {
    "collective_matmul_allgather: technique": 0,
    "collective_matmul_allgather: communication": 0,
}
REASONS = {
    "collective_matmul_allgather: technique": "sends to devices that are not its neighbours: a ppermute pair is 4 hops apart on the ring of 'i', so the 448 values it sends per device travel 1024 value-hops",
    "collective_matmul_allgather: communication": "not checked until the technique holds",
}


def collective_matmul_allgather(a, b, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    c = jnp.zeros((n, a.shape[0], b.shape[1]), a.dtype).at[me].set(a @ b)
    for step in range(1, n):
        block = jax.lax.ppermute(a, axis_name, [(i, (i + step) % n) for i in range(n)])
        c = c.at[(me - step) % n].set(block @ b)
    return c.reshape(n * a.shape[0], b.shape[1])
