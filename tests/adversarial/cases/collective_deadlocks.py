"""Only device 0 sends, so the other devices wait at the rendezvous for ever. The program hangs
on the grader's side, where the worker is stopped at the test time limit, the case is blamed and
the rest are measured; ring_all_reduce, built on this ring, hangs too."""

EXPECTED = {
    "ring_all_gather: values": 0,
    "ring_all_gather: hidden values": 0,
    "ring_all_gather: technique": 0,
    "ring_all_gather: communication": 0,
    "ring_all_reduce: values": 0,
    "ring_all_reduce: hidden values": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
MESSAGE_OF = {
    "ring_all_gather: values": "the exported program did not finish",
    "ring_all_gather: hidden values": "the exported program did not finish",
    "ring_all_gather: technique": "not checked until the values are right on at least one case",
    "ring_all_gather: communication": "not checked until the values are right on at least one case",
    "ring_all_reduce: values": "the exported program did not finish",
    "ring_all_reduce: hidden values": "the exported program did not finish",
    "ring_all_reduce: technique": "not checked until the values are right on at least one case",
    "ring_all_reduce: communication": "not checked until the values are right on at least one case",
}


def ring_all_gather(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]

    def send(block):
        return jax.lax.ppermute(block, axis_name, right)

    blocks = [x]
    block = x
    for _ in range(1, n):
        block = jax.lax.cond(me == 0, send, lambda b: b, block)
        blocks.append(block)
    order = [(me - s) % n for s in range(n)]
    stacked = jnp.stack(blocks)[jnp.argsort(jnp.array(order))]
    return stacked.reshape((n * x.shape[0],) + x.shape[1:])
