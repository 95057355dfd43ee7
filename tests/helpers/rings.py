"""A right ring all-gather written unlike the reference (a list of hops, then one scatter): the
independent work that the similarity measures must not flag."""

ANOTHER_WAY = """def ring_all_gather(x, axis_name):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    pieces = [x]
    for _ in range(n - 1):
        pieces.append(jax.lax.ppermute(pieces[-1], axis_name, right))
    stacked = jnp.stack(pieces)  # piece s is the block of device me - s
    out = jnp.zeros_like(stacked).at[(me - jnp.arange(n)) % n].set(stacked)
    return out.reshape((n * x.shape[0],) + x.shape[1:])
"""
