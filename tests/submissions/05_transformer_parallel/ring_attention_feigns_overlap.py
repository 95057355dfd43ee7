"""The ring that only carries (``ring_attention_concatenates_blocks``), with a dummy matmul per
step on the block that just arrived, multiplied by zero at the end, so that some matmul waits for
each transfer as an overlapped ring's does. Right values, the ring's ppermutes and bytes; but it
still gathers every block and builds whole rows of scores, which the memory at its peak shows,
and the dummies show in its FLOPs: it keeps the values alone."""

EXPECTED = {
    "ring_attention: technique": 0,
    "ring_attention: communication": 0,
}
REASONS = {
    "ring_attention: technique": "needs 1.95x the reference's memory per device at its peak",
    "ring_attention: communication": "not checked until the technique holds",
}


def ring_attention(q, k, v, axis_name, causal):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    block = q.shape[0]
    right = [(j, (j + 1) % n) for j in range(n)]
    ks, vs = [k], [v]
    dummy = jnp.zeros((block, block), jnp.float32)
    for _ in range(1, n):
        k, v = jax.lax.ppermute((k, v), axis_name, right)
        dummy = dummy + q.astype(jnp.float32) @ k.astype(jnp.float32).T  # waits for this step's block
        ks.append(k)
        vs.append(v)
    order = lambda blocks: jnp.roll(jnp.concatenate(blocks[::-1]), (me + 1) * block, axis=0)
    k, v = order(ks).astype(jnp.float32), order(vs).astype(jnp.float32)
    scores = q.astype(jnp.float32) @ k.T * q.shape[-1] ** -0.5
    if causal:
        rows = me * block + jnp.arange(block)[:, None]
        scores = jnp.where(jnp.arange(n * block)[None, :] <= rows, scores, -jnp.inf)
    return (jax.nn.softmax(scores, axis=1) @ v + 0.0 * dummy.sum()).astype(q.dtype)
