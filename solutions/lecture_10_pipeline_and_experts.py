"""Worked answers to the self-check exercises of lecture 10_pipeline_and_experts."""

from math import prod

import jax

from autograder.core.tasks import Targets, at_dtype


def pipeline_idle_share(stages, microbatches):
    # M + S - 1 steps: the last micro-batch enters at step M - 1 and needs S - 1 more; a stage
    # works on real data in M of them.
    return (stages - 1) / (microbatches + stages - 1)


def pipeline_shift(x, axis_name):
    n = jax.lax.axis_size(axis_name)
    # No pair sends to stage 0, so ppermute fills it with zeros; the last stage sends nothing.
    return jax.lax.ppermute(x, axis_name, perm=[(s, s + 1) for s in range(n - 1)])


def _one_activation(case):
    return float(prod(case.shapes[0]))


# The traffic each exercise is held to: the least it can send, in values per device.


TARGETS = {
    "pipeline_shift": Targets(comm_bytes=at_dtype(_one_activation)),
}
