"""Programs compared by what they compute: the same ring written with other names, comments and
an order of independent lines is one program; another way to the same answer is not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from autograder.core.program_shape import likeness, nodes
from autograder.harness import shard_map as harness
from autograder.specs import get


def _module(fn) -> str:
    task = get("01_collectives").task("ring_all_gather")
    sig = harness.signature(task, task.cases[0])
    return jax.export.deserialize(bytearray(harness.export(fn, sig))).mlir_module()


def _program(fn) -> list[str]:
    return nodes(_module(fn))


def ring(x, axis_name):
    n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
    out = jnp.zeros((n, *x.shape), x.dtype).at[me].set(x)
    block = x
    for step in range(1, n):
        block = jax.lax.ppermute(block, axis_name, [(j, (j + 1) % n) for j in range(n)])
        out = out.at[(me - step) % n].set(block)
    return out


def ring_renamed(piece, name):  # the same ring: other names, a comment, independent lines swapped
    where = jax.lax.axis_index(name)
    size = jax.lax.axis_size(name)
    gathered = jnp.zeros((size, *piece.shape), piece.dtype).at[where].set(piece)  # mine first
    for k in range(1, size):
        piece = jax.lax.ppermute(piece, name, [(j, (j + 1) % size) for j in range(size)])
        gathered = gathered.at[(where - k) % size].set(piece)
    return gathered


def doubled_first(x, axis_name):
    doubled = x * 2.0
    shifted = x + 1.0
    return ring(doubled - shifted, axis_name)


def shifted_first(x, axis_name):  # the same two independent lines, the other way round
    shifted = x + 1.0
    doubled = x * 2.0
    return ring(doubled - shifted, axis_name)


def gathered(x, axis_name):  # the same answer by the collective the task forbids
    return jax.lax.all_gather(x, axis_name)


def test_the_same_program_however_written_is_one_program():
    assert _program(ring) == _program(ring_renamed)
    assert likeness(_program(ring), _program(ring_renamed)) == 1.0


def test_the_order_of_independent_lines_does_not_matter():
    assert _module(doubled_first) != _module(shifted_first)  # the text follows the order written
    assert _program(doubled_first) == _program(shifted_first)
    assert 0.5 < likeness(_program(ring), _program(doubled_first)) < 1.0  # a near-copy: the ring, plus two lines


def test_another_way_to_the_same_answer_shares_little():
    assert likeness(_program(ring), _program(gathered)) < 0.5


def test_likeness_counts_repeated_nodes():
    assert likeness(["a", "a", "b"], ["a", "b"]) == 2 / 3
    assert likeness([], []) == 0.0
