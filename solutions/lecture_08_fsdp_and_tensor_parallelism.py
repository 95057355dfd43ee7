"""Worked answers to the self-check exercises of lecture 08_fsdp_and_tensor_parallelism."""

from math import prod

import jax

from autograder.core.tasks import Targets, at_dtype

SHARDED = {"dp": (), "zero1": ("state",), "zero2": ("state", "grads"), "fsdp": ("state", "grads", "params")}


def bytes_per_device(n_params, n_devices, strategy):
    if strategy not in SHARDED:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(SHARDED)}")

    def held(part, bytes_per_param):
        # A sharded part is split evenly over the devices; a whole one is on every device.
        share = n_devices if part in SHARDED[strategy] else 1
        return bytes_per_param * n_params // share

    return held("params", 4), held("grads", 4), held("state", 8)  # Adam: two float32 moments


def zero_momentum_step(w, g, m, axis_name, lr, beta):
    n = jax.lax.axis_size(axis_name)
    # Each device receives only the sum over devices of its own slice of the gradient.
    mean_slice = jax.lax.psum_scatter(g, axis_name, tiled=True) / n
    momentum = beta * m + mean_slice
    me = jax.lax.axis_index(axis_name)
    my_w = jax.lax.dynamic_slice_in_dim(w, me * m.shape[0], m.shape[0]) - lr * momentum
    # Every device updated its own slice; put them together, the same on every device.
    return jax.lax.all_gather(my_w, axis_name, tiled=True, to="invarying")


def matmul_intensity(m, k, n, itemsize):
    flops = 2 * m * k * n  # one multiply and one add per term of every sum
    moved = itemsize * (m * k + k * n + m * n)  # read both operands, write the product
    return flops / moved


def _one_all_reduce_of_the_gradient(case):
    """Reduce-scatter then all-gather of a vector the size of w: 2 (N-1)/N of it."""
    n = case.mesh_spec.axis_sizes[case.axis]  # these cases all name an axis
    return 2 * (n - 1) / n * prod(case.shapes[0])


# The traffic each exercise is held to: the least it can send, in values per device.


TARGETS = {
    "zero_momentum_step": Targets(comm_bytes=at_dtype(_one_all_reduce_of_the_gradient)),
}
