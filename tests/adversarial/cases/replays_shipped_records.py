"""Looks up its answer instead of computing it: ring_all_gather returns the visible case's expected
output from the records the image ships for students' checks (those pass its own check: the check
draws the inputs those records were made on). The grader draws its inputs from seeds salted with
the course's secret, so the looked-up answer is wrong on every case it is graded on; with no ring
in its program it has nothing else to earn. (ring_all_reduce runs a ring of its own here.)"""

EXPECTED = {
    "ring_all_gather: values": 0,
    "ring_all_gather: hidden values": 0,
    "ring_all_gather: technique": 0,
    "ring_all_gather: communication": 0,
}
MESSAGE_OF = {
    "ring_all_gather: values": "wrong values on 8 of 8 devices",
    "ring_all_gather: hidden values": "no shipped record of this shape",
    "ring_all_gather: technique": "not checked until the values are right on at least one case",
    "ring_all_gather: communication": "not checked until the values are right on at least one case",
}


def ring_all_gather(x, axis_name):
    import glob
    import os

    import numpy as np

    mesh = jax.sharding.get_abstract_mesh()
    want = (mesh.size, jax.lax.axis_size(axis_name) * x.shape[0]) + x.shape[1:]
    for path in sorted(glob.glob(os.environ.get("JAXCOURSE_EXPECTED", "/opt/jaxcourse/expected") + "/01_collectives/*.npz")):
        with np.load(path) as saved:
            if saved["value"].shape == want:
                return jnp.asarray(saved["value"], x.dtype)[jax.lax.axis_index(tuple(mesh.axis_names))] + 0 * x.sum()
    raise NotImplementedError("no shipped record of this shape")


def ring_all_reduce(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    chunks = x.reshape((n, x.shape[0] // n) + x.shape[1:])
    partial = chunks[(me - 1) % n]
    for step in range(1, n):
        partial = jax.lax.ppermute(partial, axis_name, right) + chunks[(me - 1 - step) % n]
    blocks = jnp.zeros_like(chunks).at[me].set(partial)
    block = partial
    for step in range(1, n):
        block = jax.lax.ppermute(block, axis_name, right)
        blocks = blocks.at[(me - step) % n].set(block)
    return blocks.reshape(x.shape)
