"""A case's inputs are made on the trusted side from its seed, the same for the reference and for
every submission; a key among them is wrapped around its data on the host (``inputs.key``), which
must be the very key ``jax.random.key`` makes, and compile nothing."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from autograder.harness.calls import signature
from autograder.harness.shard_map import jax_dtype
from autograder.mesh import MeshSpec
from autograder.specs import find
from autograder.trusted.inputs import key, make_inputs


@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**31 - 1, 2**31, 2**32 - 1])
def test_a_key_from_its_data_is_the_key_jax_makes(seed):
    made, theirs = key(seed), jax.random.key(seed)
    assert made.dtype == theirs.dtype == jax_dtype("key")
    np.testing.assert_array_equal(jax.random.key_data(made), jax.random.key_data(theirs))
    np.testing.assert_array_equal(jax.random.uniform(made, (4,)), jax.random.uniform(theirs, (4,)))


def test_a_seed_past_the_default_keys_data_is_left_to_jax():
    np.testing.assert_array_equal(jax.random.key_data(key(2**32 + 5)), jax.random.key_data(jax.random.key(2**32 + 5)))


def test_another_default_key_is_left_to_jax():
    jax.config.update("jax_default_prng_impl", "rbg")
    try:
        made, theirs = key(5), jax.random.key(5)
    finally:
        jax.config.update("jax_default_prng_impl", "threefry2x32")
    assert made.dtype == theirs.dtype != jax_dtype("key")
    np.testing.assert_array_equal(jax.random.key_data(made), jax.random.key_data(theirs))


def test_a_cases_inputs_with_a_key_compile_nothing(compiles):
    task = find("01_collectives").task("fold_rng_over_axis")
    for case in task.cases:
        sig = signature(task, case)
        mesh = MeshSpec.parse(sig["mesh"]).build()
        (made,) = make_inputs(sig, 3, mesh)
        assert made.dtype == jax_dtype("key") and made.sharding.mesh.shape == mesh.shape
    assert compiles == []
