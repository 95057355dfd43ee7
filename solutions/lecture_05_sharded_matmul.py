"""Worked answers to the self-check exercises of lecture 05_sharded_matmul."""

import jax

from autograder.core.tasks import Targets, at_dtype


def matmul_scatter_columns(a, b, axis_name):
    # My columns of A meet my rows of B: a partial product of my rows of C, summed over
    # `axis_name` only (the other axes split the rows, so they have nothing to add). Each device
    # keeps its own block of columns of the sum: a reduce-scatter along dimension 1.
    return jax.lax.psum_scatter(a @ b, axis_name, scatter_dimension=1, tiled=True)


def cheaper_gather(i, j, k, n):
    gather_a = (n - 1) * i * j // n  # each device receives the n - 1 row blocks of A it lacks
    gather_b = (n - 1) * j * k // n
    return ("A", gather_a) if gather_a <= gather_b else ("B", gather_b)


def _scattered_product(case):
    """A reduce-scatter of this device's (rows x K) partial product: (N-1)/N of it."""
    n = case.mesh_spec.axis_sizes[case.axis]  # these cases all name an axis
    rows = case.shapes[0][0]
    k = case.shapes[1][1]
    return (n - 1) / n * rows * k


# The traffic each exercise is held to: the least it can send, in values per device.


TARGETS = {
    "matmul_scatter_columns": Targets(comm_bytes=at_dtype(_scattered_product)),
}
