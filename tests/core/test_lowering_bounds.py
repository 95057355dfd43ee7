"""``within``: a compiled program held to the bounds of a correct plan, its exact choice said."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax import P

from autograder.trace import OutsideBounds, hlo_census, within


def _census(mesh, fn, spec, shape=(8, 16)):
    arg = jax.ShapeDtypeStruct(shape, jnp.float32, sharding=jax.NamedSharding(mesh, spec))
    text = jax.jit(fn).lower(arg).compile().as_text()
    return hlo_census(text, tuple(mesh.shape.values()), tuple(mesh.axis_names))


@pytest.fixture(scope="module")
def summed():
    """A psum of 16 values a device over 8 devices: a ring all-reduce sends 2 x 7/8 x 16 = 28."""
    mesh = jax.make_mesh((8,), ("i",))
    sm = jax.shard_map(lambda x: jax.lax.psum(x, "i"), mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=False)
    return _census(mesh, sm, P("i"))


def test_a_plan_within_its_bounds_is_said_with_the_jax_version(summed):
    line = within(summed, {"all-reduce", "reduce-scatter", "all-gather"}, 14, 28)
    assert line == (
        f"on JAX {jax.__version__}, XLA:CPU chose all-reduce x1: 28 values per device (a correct plan sends 14 to 28)"
    )
    assert within(summed, {"all-reduce"}, 28).endswith("28 values per device (a correct plan sends 28)")


def test_more_values_than_the_most_a_plan_sends_is_refused(summed):
    with pytest.raises(OutsideBounds, match=r"28 values per device \(a correct plan sends 7 to 14\): outside"):
        within(summed, {"all-reduce"}, 7, 14)


def test_a_collective_no_correct_plan_uses_is_refused(summed):
    with pytest.raises(OutsideBounds, match=r"it chose \{'all-reduce': 1\}; a correct plan uses only \['all-gather'\]"):
        within(summed, {"all-gather"}, 0, 100)


def test_kinds_per_axis_are_held_where_each_collective_runs():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    sm = jax.shard_map(
        lambda x: jax.lax.psum(x, "model"), mesh=mesh, in_specs=P("data", "model"), out_specs=P("data"), check_vma=False
    )
    census = _census(mesh, sm, P("data", "model"))
    assert "all-reduce x1 over 'model'" in within(census, {"model": {"all-reduce"}}, 0, 1e6)
    with pytest.raises(OutsideBounds, match="over 'model' it chose"):
        within(census, {"data": {"all-reduce"}}, 0, 1e6)


def test_kinds_per_axis_on_a_census_read_without_axes_is_refused_not_passed():
    """A census read without the mesh's axis names counts no collective under any axis: held per
    axis, it would pass whatever it ran."""
    mesh = jax.make_mesh((8,), ("i",))
    sm = jax.shard_map(lambda x: jax.lax.psum(x, "i"), mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=False)
    arg = jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=jax.NamedSharding(mesh, P("i")))
    census = hlo_census(jax.jit(sm).lower(arg).compile().as_text())
    with pytest.raises(ValueError, match=r"hlo_census\(text, mesh_shape, axis_names\)"):
        within(census, {"i": {"all-gather"}}, 0, 100)
