"""The all-gather ring files each product under row block me + step, but the block in hand came
from device me - step: right on a ring of 2 only."""

EXPECTED = {
    "collective_matmul_allgather: values": 0,
    "collective_matmul_allgather: hidden values": 0,
}
REASONS = {
    "collective_matmul_allgather: values": "wrong values on 8 of 8 devices",
    "collective_matmul_allgather: hidden values": "mesh 4:i, axis 'i', bfloat16",
}


def collective_matmul_allgather(a, b, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    c = jnp.zeros((n, a.shape[0], b.shape[1]), a.dtype)
    block = a
    for step in range(n):
        c = c.at[(me + step) % n].set(block @ b)
        if step < n - 1:
            block = jax.lax.ppermute(block, axis_name, right)
    return c.reshape(n * a.shape[0], b.shape[1])
