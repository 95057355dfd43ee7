"""Worked answers to the self-check exercises of lecture 06_data_parallel_training."""

from math import prod

import jax
import jax.numpy as jnp

from autograder.core.tasks import Targets, at_dtype


def data_parallel_gradient(w, x, y, axis_name):
    # Let w vary over the data axis, so that jax.grad returns this device's own gradient, then
    # average: every device holds as many examples, so the mean of the local means is the mean.
    local_w = jax.lax.pcast(w, axis_name, to="varying")
    grad = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(local_w)
    return jax.lax.pmean(grad, axis_name)


def accumulated_gradient(w, x, y, axis_name, micro):
    local_w = jax.lax.pcast(w, axis_name, to="varying")  # so that grad gives this device's gradient
    xs = x.reshape(micro, -1, x.shape[1])  # (micro, rows per micro-batch, features)
    ys = y.reshape(micro, -1, y.shape[1])

    def add_one(m, total):
        # Only micro-batch m's activations are live; its gradient is added and then dropped.
        return total + jax.grad(lambda w: jnp.mean((xs[m] @ w - ys[m]) ** 2))(local_w)

    total = jax.lax.fori_loop(0, micro, add_one, jnp.zeros_like(local_w))
    # Equal micro-batches on every device: the mean of all the micro-batch means is the mean over
    # the global batch. Dividing locally costs nothing; the one pmean, after the loop, sends one
    # gradient, where a pmean inside the loop would send `micro` of them.
    return jax.lax.pmean(total / micro, axis_name)


def _all_reduce_weights(case):
    """One all-reduce of a gradient the size of the weights: 2 (N-1)/N of it."""
    n = case.mesh_spec.axis_sizes[case.axis]  # these cases all name an axis
    return 2 * (n - 1) / n * prod(case.shapes[0])


# The traffic each exercise is held to: the least it can send, in values per device.


TARGETS = {
    "data_parallel_gradient": Targets(comm_bytes=at_dtype(_all_reduce_weights)),
    "accumulated_gradient": Targets(comm_bytes=at_dtype(_all_reduce_weights)),
}
