"""The HLO census: what really runs, with loops multiplied out, against hand-written modules and
real compilations."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from autograder.core.dataflow import matmul_waits, overlap_problem
from autograder.core.hlo import custom_call_targets, hlo_census, stablehlo_collectives, torus_hops
from autograder.harness.shard_map import build

LOOP_HLO = """HloModule m, num_partitions=8

%body (p: (s32[], f32[4,2])) -> (s32[], f32[4,2]) {
  %p = (s32[], f32[4,2]{1,0}) parameter(0)
  %x = f32[4,2]{1,0} get-tuple-element(%p), index=1
  %cp = f32[4,2]{1,0} collective-permute(%x), channel_id=1, source_target_pairs={{0,1},{1,0}}
  ROOT %t = (s32[], f32[4,2]{1,0}) tuple(%i, %cp)
}

%cond (p: (s32[], f32[4,2])) -> pred[] {
  ROOT %c = pred[] constant(true)
}

ENTRY %main (a: f32[4,2]) -> f32[8,2] {
  %a = f32[4,2]{1,0} parameter(0)
  %w = (s32[], f32[4,2]{1,0}) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"7"}}
  %ag = bf16[8,2]{1,0} all-gather(%a), channel_id=2, replica_groups=[2,4]<=[8], dimensions={0}
  ROOT %ar = f32[4,2]{1,0} all-reduce(%a), channel_id=3, replica_groups={{0,1},{2,3},{4,5},{6,7}}, to_apply=%add
}
"""


def test_census_multiplies_loop_bodies_by_trip_count():
    census = hlo_census(LOOP_HLO)
    assert dict(census.counts) == {"collective-permute": 7, "all-gather": 1, "all-reduce": 1}
    # permute: 7 x 8 values; all-gather of 16 over groups of 4: 3/4 x 16; all-reduce over 2: 2 x 1/2 x 8
    assert census.values_per_device == 7 * 8 + 12 + 8
    assert census.bytes_per_device == 7 * 8 * 4 + 12 * 2 + 8 * 4


def test_census_flags_loops_of_unknown_length():
    census = hlo_census(LOOP_HLO.replace(', backend_config={"known_trip_count":{"n":"7"}}', ""))
    assert census.unbounded == ["ppermute"]
    assert census.values_per_device is None and census.bytes_per_device is None


def _compiled(fn, shape=(16, 3), mesh="8:i", axis="i"):
    names = mesh.partition(":")[2].split(",")
    sig = {
        "mesh": mesh,
        "axis": axis,
        "kwargs": {},
        "out_spec": None,
        "inputs": [{"shape": list(shape), "dtype": "float32", "spec": [names]}],
    }
    wrapped, structs, _ = build(fn, sig)
    lowered = wrapped.lower(*structs)
    return lowered.as_text(), lowered.compile().as_text()


def test_real_all_gather_and_ring_are_told_apart():
    asked, hlo = _compiled(lambda x, a: jax.lax.all_gather(x, a, tiled=True))
    assert stablehlo_collectives(asked) == {"all-gather": 1}
    census = hlo_census(hlo)
    assert dict(census.counts) == {"all-gather": 1}
    assert census.values_per_device == 7 * 2 * 3  # (N-1)/N of the 16x3 result

    def ring(x, a):
        for _ in range(7):
            x = jax.lax.ppermute(x, a, [(i, (i + 1) % 8) for i in range(8)])
        return x

    asked, hlo = _compiled(ring)
    assert stablehlo_collectives(asked) == {"collective-permute": 7}
    assert hlo_census(hlo).counts == {"collective-permute": 7}


def test_fori_loop_is_counted_by_its_trip_count():
    def ring(x, a):
        def step(_, y):
            return jax.lax.ppermute(y, a, [(i, (i + 1) % 8) for i in range(8)])

        return jax.lax.fori_loop(0, 5, step, x)

    census = hlo_census(_compiled(ring)[1])
    assert census.counts["collective-permute"] == 5
    assert census.values_per_device == 5 * 2 * 3


def test_host_callbacks_show_up_as_custom_calls():
    def leaky(x, a):
        return jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    asked, _ = _compiled(leaky)
    assert any("callback" in t for t in custom_call_targets(asked))
    assert custom_call_targets(_compiled(lambda x, a: x * 2)[0]) == set()


def test_a_tuple_psum_counts_every_member():
    """XLA:CPU merges psum((a, b)) into one tuple all-reduce; both arrays still travel."""

    def stats(x, a):
        s, q = jax.lax.psum((x.sum(1), (x * x).sum(1)), a)
        return s + q

    census = hlo_census(_compiled(stats)[1])
    assert census.counts == {"all-reduce": 1}
    assert census.values_per_device == 2 * (2 * 7 / 8) * 2  # two arrays of 2 rows, ring all-reduce


def test_group_sizes_in_every_spelling_xla_uses():
    ar = "%s = f32[12]{0} all-reduce(%a), channel_id=3, replica_groups=GROUPS, to_apply=%add"
    cases = {
        "{{0,1,2,3},{4,5,6,7}}": 4,
        "[4,2]<=[2,4]T(1,0)": 2,
        "mesh['axis_0'=2,'axis_1'=4] {'axis_1'}": 4,
        "mesh['x'=2,'y'=4] {'x'}": 2,
        "mesh['x'=2,'y'=4] {'x','y'}": 8,
    }
    for groups, n in cases.items():
        hlo = LOOP_HLO.replace(LOOP_HLO.splitlines()[-2], "  ROOT " + ar.replace("GROUPS", groups))
        census = hlo_census(hlo)
        assert census.counts["all-reduce"] == 1
        assert census.values_per_device - (7 * 8 + 12) == pytest.approx(2 * (n - 1) / n * 12), groups


def test_hops_are_counted_the_shorter_way_round_each_axis_ring():
    assert [torus_hops(0, t, (8,)) for t in range(8)] == [0, 1, 2, 3, 4, 3, 2, 1]
    # 2x4 mesh, row-major: device 1 is (0, 1), device 7 is (1, 3): one hop on x, two on y's ring
    assert torus_hops(1, 7, (2, 4)) == 1 + 2
    assert torus_hops(0, 3, (2, 4)) == 1  # across the wrap of y's ring


def _shifts(*shifts):
    """One send per shift, each of the block in hand ``shift`` places on along the axis."""

    def sends(x, a):
        n = jax.lax.axis_size(a)
        for k in shifts:
            x = jax.lax.ppermute(x, a, [(i, (i + k) % n) for i in range(n)])
        return x

    return sends


@pytest.mark.parametrize(
    "mesh, axis, shifts, farthest, value_hops",
    [
        ("8:i", "i", (1,) * 7, 1, 7 * 6),  # a ring: 7 sends of 6 values to a neighbour
        ("8:i", "i", range(1, 8), 4, (1 + 2 + 3 + 4 + 3 + 2 + 1) * 6),  # direct sends: step k crosses k links
        ("2x4:x,y", "y", (3,), 1, 6),  # 3 places on a ring of 4 is one step the other way
        ("2x4:x,y", "y", (1, 2, 3), 2, (1 + 2 + 1) * 6),
        ("2x4:x,y", "x", (1,), 1, 6),  # a neighbour on x is 4 apart in device numbers
    ],
)
def test_value_hops_of_real_permutes(mesh, axis, shifts, farthest, value_hops):
    shape = tuple(int(s) for s in mesh.partition(":")[0].split("x"))
    census = hlo_census(_compiled(_shifts(*shifts), mesh=mesh, axis=axis)[1], mesh_shape=shape)
    assert census.values_per_device == len(shifts) * 6
    assert (census.farthest_hops, census.link_values_per_device) == (farthest, value_hops)


def _ring_matmul(gather_first: bool = False, helper: bool = False):
    """A collective matmul over 'i' (blocks of A travel right): a matmul per block, each needing
    only its own block (the order the program lists them in does not matter), or one matmul of
    all the blocks gathered; ``helper`` hides the matmul in a jitted function."""
    matmul = jax.jit(lambda x, y: x @ y) if helper else (lambda x, y: x @ y)

    def per_device(a, b):
        n, me = jax.lax.axis_size("i"), jax.lax.axis_index("i")
        blocks, block = [a], a
        for _ in range(1, n):
            block = jax.lax.ppermute(block, "i", [(j, (j + 1) % n) for j in range(n)])
            blocks.append(block)
        products = [matmul(jnp.concatenate(blocks), b)] if gather_first else [matmul(x, b) for x in blocks]
        return jnp.roll(jnp.concatenate(products), me * a.shape[0], axis=0)

    return per_device


@pytest.mark.parametrize(
    "gather_first, helper, waits",
    [(False, False, [0, 1, 2, 3]), (True, False, [3]), (True, True, [3]), (False, True, [0, 1, 2, 3])],
)
def test_matmul_waits_follow_the_blocks_through_calls(gather_first, helper, waits):
    mesh = jax.make_mesh((4,), ("i",), devices=jax.devices()[:4])
    a = jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=jax.NamedSharding(mesh, jax.P("i")))
    b = jax.ShapeDtypeStruct((8, 12), jnp.float32, sharding=jax.NamedSharding(mesh, jax.P(None, "i")))
    program = jax.shard_map(
        _ring_matmul(gather_first, helper),
        mesh=mesh,
        in_specs=(jax.P("i"), jax.P(None, "i")),
        out_specs=jax.P(None, "i"),
    )
    got = matmul_waits(jax.jit(program).lower(a, b).as_text())
    assert got == waits
    assert bool(overlap_problem(got, 4)) == gather_first
