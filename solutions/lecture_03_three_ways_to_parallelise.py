"""Worked answers to the self-check exercises of course/03_three_ways_to_parallelise.ipynb."""

import jax
import jax.numpy as jnp

from autograder.core.tasks import Targets, at_dtype


def argmax_split_classes(logits, axis_name):
    columns = logits.shape[1]  # classes per device: device k holds k * columns to (k + 1) * columns - 1
    local_max = logits.max(axis=1)  # (batch,), varying over axis_name
    local_arg = jnp.argmax(logits, axis=1) + jax.lax.axis_index(axis_name) * columns  # a global index
    best = jax.lax.pmax(local_max, axis_name)  # invariant: the same largest logit on every device
    # Only the devices holding the largest logit offer their index; the smallest offer wins ties,
    # as in jnp.argmax, and pmin makes the answer invariant along axis_name.
    sentinel = jnp.iinfo(jnp.int32).max
    return jax.lax.pmin(jnp.where(local_max == best, local_arg, sentinel).astype(jnp.int32), axis_name)


def subtract_global_mean(x, axis_name):
    return x - jax.lax.pmean(x.mean(), axis_name)


def _argmax_values(case):
    # Two all-reduces of one number per row (the largest logit, then its index): 2 (N - 1)/N each.
    n = _axis_size(case)
    batch = case.shapes[0][0]
    return 2 * 2 * (n - 1) / n * batch


def _global_mean_values(case):
    # One number all-reduced: 2 (N - 1)/N values per device.
    n = _axis_size(case)
    return 2 * (n - 1) / n


def _axis_size(case):
    return case.mesh_spec.axis_sizes[case.axis]


# The traffic each exercise is held to: the least it can send, in values per device.


TARGETS = {
    "argmax_split_classes": Targets(comm_bytes=at_dtype(_argmax_values)),
    "subtract_global_mean": Targets(comm_bytes=at_dtype(_global_mean_values)),
}
