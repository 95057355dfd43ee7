"""Ring attention whose ring only carries: k and v go round the ring of neighbour ppermutes as
they should, but every block is kept, the blocks are put back together and attention runs once at
the end, over the whole sequence. Right values, the ring's ppermutes and its bytes; but a device
holds every block at once, 1.8x the reference's memory at its peak on the first visible case (and
nothing is computed while the blocks travel): not ring attention, so it keeps the values alone
and its traffic is not judged."""

EXPECTED = {
    "ring_attention: technique": 0,
    "ring_attention: communication": 0,
}
REASONS = {
    "ring_attention: technique": "needs 1.83x the reference's memory per device at its peak",
    "ring_attention: communication": "not checked until the technique holds",
}


def ring_attention(q, k, v, axis_name, causal):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    block = q.shape[0]
    right = [(j, (j + 1) % n) for j in range(n)]
    ks, vs = [k], [v]
    for _ in range(1, n):
        k, v = jax.lax.ppermute((k, v), axis_name, right)
        ks.append(k)
        vs.append(v)
    # At step s this device holds block me - s: in the sequence's order, the blocks run backwards.
    order = lambda blocks: jnp.roll(jnp.concatenate(blocks[::-1]), (me + 1) * block, axis=0)
    k, v = order(ks).astype(jnp.float32), order(vs).astype(jnp.float32)
    scores = q.astype(jnp.float32) @ k.T * q.shape[-1] ** -0.5
    if causal:
        rows = me * block + jnp.arange(block)[:, None]
        scores = jnp.where(jnp.arange(n * block)[None, :] <= rows, scores, -jnp.inf)
    return (jax.nn.softmax(scores, axis=1) @ v).astype(q.dtype)
