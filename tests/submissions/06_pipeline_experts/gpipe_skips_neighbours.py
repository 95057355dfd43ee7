"""A right pipeline whose last stage then sends its outputs straight to each device in turn, a
ppermute from stage S - 1 to device k for every k, instead of passing them round the ring: as many
ppermutes of as many values, so its values and its bytes are right, but a send to the device
opposite on a ring of 8 crosses 4 links: sends that skip their neighbours are not a pipeline's, so
it keeps its values alone."""

EXPECTED = {
    "gpipe: technique": 0,
    "gpipe: communication": 0,
}
REASONS = {
    "gpipe: technique": "sends to devices that are not its neighbours: a ppermute pair is 2 hops apart on the ring of 'i', so the 288 values it sends per device travel 352 value-hops",
    "gpipe: communication": "not checked until the technique holds",
}


def gpipe(weights, x, axis_name):
    stages, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    micro = x.shape[0]
    right = [(j, j + 1) for j in range(stages - 1)]
    h, outputs = jnp.zeros(x.shape[1:], x.dtype), jnp.zeros_like(x)
    for t in range(micro + stages - 1):
        if t:
            h = jax.lax.ppermute(h, axis_name, right)
        h = stage(jnp.where(me == 0, x[min(t, micro - 1)], h), weights[0])
        if t >= stages - 1:
            outputs = jnp.where(me == stages - 1, outputs.at[t - stages + 1].set(h), outputs)
    mine = outputs
    for k in range(stages - 1):
        mine = jnp.where(me == k, jax.lax.ppermute(outputs, axis_name, [(stages - 1, k)]), mine)
    return mine
