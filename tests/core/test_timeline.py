"""A program's timeline, read from its compiled HLO on 8 CPU devices: whose inputs each send
carries and when each matmul could start. Two rings that send along the same pairs (one forwards
what it received, one sends its own block past its neighbours) are told apart by their labels."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.core.timeline import STEPS_KEPT, timeline

from ..helpers.hlo_fixtures import hlo_fixture

N = 8
RIGHT = [(i, (i + 1) % N) for i in range(N)]
BLOCKS, WHOLE = P("i"), P()


@pytest.fixture(scope="module")
def mesh():
    return jax.make_mesh((N,), ("i",))


def _timeline(mesh, body, *shapes, out=BLOCKS):
    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("i"),) * len(shapes), out_specs=out))
    args = [jax.ShapeDtypeStruct(s, jnp.float32, sharding=NamedSharding(mesh, P("i"))) for s in shapes]
    return timeline(fn.lower(*args).compile().as_text())


def forwarding_ring(x):
    blocks, block = [x], x
    for _ in range(N - 1):
        block = jax.lax.ppermute(block, "i", RIGHT)
        blocks.append(block)
    return jnp.concatenate(blocks)


def test_a_ring_that_forwards_carries_the_block_that_started_k_devices_back(mesh):
    steps = _timeline(mesh, forwarding_ring, (N * 2, 3))
    assert steps["kinds"] == ["collective-permute"] * (N - 1)
    for k, (pairs, carried) in enumerate(zip(steps["steps"], steps["carried"])):
        assert [[(s - k) % N] for s, _ in pairs] == carried
    assert all(read is None for slot in steps["computes"] for read in slot)


def test_direct_sends_carry_the_sender_s_own_block_every_time(mesh):
    def direct(x):
        return jnp.concatenate(
            [x] + [jax.lax.ppermute(x, "i", [(i, (i + k) % N) for i in range(N)]) for k in range(1, N)]
        )

    steps = _timeline(mesh, direct, (N * 2, 3))
    assert len(steps["steps"]) == N - 1
    assert all(carried == [[s] for s, _ in pairs] for pairs, carried in zip(steps["steps"], steps["carried"]))


def test_a_ring_in_a_loop_is_read_once_per_trip(mesh):
    def looped(x):
        def step(_, carry):
            block, total = carry
            block = jax.lax.ppermute(block, "i", RIGHT)
            return block, total + block

        return jax.lax.fori_loop(0, N - 1, step, (x, x))[1]

    steps = _timeline(mesh, looped, (N * 2, 3))
    assert len(steps["steps"]) == N - 1
    assert steps["carried"][3] == [[(s - 3) % N] for s, _ in steps["steps"][3]]


def test_a_matmul_is_drawn_after_the_step_whose_block_it_waits_for(mesh):
    def collective_matmul(a, b):
        block, out = a, []
        for step in range(N):
            out.append(block @ b.T)
            if step < N - 1:
                block = jax.lax.ppermute(block, "i", RIGHT)
        return jnp.concatenate(out)

    steps = _timeline(mesh, collective_matmul, (N * 4, 16), (N * 2, 16))
    for slot, reads in enumerate(steps["computes"]):
        assert reads == [sorted({d, (d - slot) % N}) for d in range(N)]


def test_an_all_to_all_sends_each_device_its_piece(mesh):
    def exchange(x):
        mine = jax.lax.all_to_all(x, "i", 0, 0, tiled=True)
        return mine @ jnp.ones((3, 3), x.dtype)

    steps = _timeline(mesh, exchange, (N * N, 3))
    assert steps["kinds"] == ["all-to-all"]
    assert sorted(map(tuple, steps["steps"][0])) == [(s, t) for s in range(N) for t in range(N) if s != t]
    assert all(carried == [s] for (s, _), carried in zip(steps["steps"][0], steps["carried"][0]))
    assert steps["computes"][1] == [list(range(N))] * N


def test_a_library_all_gather_is_one_step_in_which_each_device_sends_every_other_its_block(mesh):
    def gathered(x):
        return jax.lax.all_gather(x, "i", tiled=True) @ jnp.ones((3, 3), x.dtype)

    steps = _timeline(mesh, gathered, (N * 2, 3))
    assert steps["kinds"] == ["all-gather"]
    assert sorted(map(tuple, steps["steps"][0])) == [(s, t) for s in range(N) for t in range(N) if s != t]
    assert all(carried == [s] for (s, _), carried in zip(steps["steps"][0], steps["carried"][0]))
    assert steps["computes"] == [[None] * N, [list(range(N))] * N]  # the matmul waits for the gather


def test_a_program_without_collectives_has_no_timeline(mesh):
    assert _timeline(mesh, lambda x: x @ jnp.ones((3, 3), x.dtype), (N * 2, 3)) is None


def test_a_long_ring_is_drawn_up_to_the_steps_a_picture_holds(mesh):
    def long(x):
        return jax.lax.fori_loop(0, 3 * STEPS_KEPT, lambda _, b: jax.lax.ppermute(b, "i", RIGHT), x)

    assert len(_timeline(mesh, long, (N * 2, 3))["steps"]) == STEPS_KEPT


def test_an_asynchronous_permute_as_xla_gpu_splits_it_is_one_step():
    """XLA's GPU test module: a permute started and then awaited, each device's block to the other."""
    steps = timeline(hlo_fixture("gpu_collective_permute_start.hlo"))
    assert steps is not None and steps["steps"] == [[[0, 1], [1, 0]]] and steps["carried"] == [[[0], [1]]]


def test_a_combined_permute_carries_what_both_its_operands_were_made_from():
    text = hlo_fixture("collective_permute_start_combined.hlo").replace(
        "HloModule test", "HloModule test, num_partitions=2"
    )
    steps = timeline(text)
    assert steps is not None and steps["carried"] == [[[0], [1]]]
