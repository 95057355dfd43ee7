"""The roofline on real compiled programs of 8 devices, against closed forms: a matmul takes its
FLOPs at its dtype's peak (at the measured share of it), a ring all-gather the book's ring time,
a collective hides only under work its dataflow lets run while it travels."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.core.calibration import calibration_for, matmul_fraction
from autograder.core.machines import MACHINES
from autograder.core.quick_compile import compiler_options
from autograder.core.roofline import Cost, cost_of, project

H100 = MACHINES["8 x H100 SXM"]
TWO_HOSTS = MACHINES["2 hosts x 4 H100 over 400 Gb/s"]
BF16 = jnp.bfloat16


def _cost(fn, mesh, *structs):
    with jax.set_mesh(mesh):
        lowered = jax.jit(fn).lower(*structs)
        return cost_of(lowered, lowered.compile(compiler_options(mesh)), mesh)


def _struct(mesh, shape, spec, dtype=BF16):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))


def _ring_all_gather(x, axis="i"):
    """The course's reference ring: each step passes the block just received to the right and
    writes it into place."""
    n, me = jax.lax.axis_size(axis), jax.lax.axis_index(axis)
    blocks = jnp.zeros((n,) + x.shape, x.dtype).at[me].set(x)
    block = x
    for step in range(1, n):
        block = jax.lax.ppermute(block, axis, [(i, (i + 1) % n) for i in range(n)])
        blocks = blocks.at[(me - step) % n].set(block)
    return blocks.reshape((n * x.shape[0],) + x.shape[1:])


def _exposed(p):
    """A projection's time less the call's fixed cost, which the book's formulas leave out."""
    return p.total_s - p.per_call_s


@pytest.mark.parametrize("machine", MACHINES.values(), ids=lambda m: m.name)
@pytest.mark.parametrize("dtype, name", [(jnp.bfloat16, "bf16"), (jnp.float32, "f32")])
def test_a_matmul_takes_its_flops_at_its_dtypes_peak(machine, dtype, name):
    mesh = jax.make_mesh((8,), ("i",))
    cost = _cost(lambda a, b: a @ b, mesh, _struct(mesh, (64, 128), P(), dtype), _struct(mesh, (128, 32), P(), dtype))
    projected = project(cost, {"i": 8}, machine)
    share = matmul_fraction(calibration_for(machine), name)
    assert cost.flops == 2 * 64 * 128 * 32 and cost.dots == {name: 1.0} and projected.links_s == {}
    assert projected.compute_s == pytest.approx(cost.flops / machine.peak_flops(name) / share, rel=1e-12)


def test_a_float32_matmul_runs_at_half_the_bfloat16_rate_on_a_gpu_and_at_highest_precision_far_slower():
    mesh = jax.make_mesh((8,), ("i",))
    a, b = _struct(mesh, (64, 128), P(), jnp.float32), _struct(mesh, (128, 32), P(), jnp.float32)
    default = project(_cost(lambda a, b: a @ b, mesh, a, b), {"i": 8}, H100)
    highest = project(_cost(lambda a, b: jnp.matmul(a, b, precision="highest"), mesh, a, b), {"i": 8}, H100)
    bf16 = project(
        _cost(lambda a, b: a @ b, mesh, _struct(mesh, (64, 128), P()), _struct(mesh, (128, 32), P())), {"i": 8}, H100
    )
    hopper = calibration_for(H100).matmul
    # TF32 at 494.7 against bf16's 989.4 TFLOP/s; fp32 at 66.9; each at the fraction an H200 reached
    assert default.compute_s == pytest.approx(2 * bf16.compute_s * hopper["bf16"] / hopper["f32"], rel=1e-3)
    assert highest.compute_s == pytest.approx(
        989.4 / 66.9 * bf16.compute_s * hopper["bf16"] / hopper["f32:highest"], rel=1e-3
    )


def test_a_bfloat16_ring_all_gather_takes_the_books_ring_time_on_nvlink_and_its_last_write():
    """32 MiB blocks on 8 H100s: (N - 1)/N * B / link, plus the write of the last block into
    place, which nothing runs beside: the zeros and every other write run while the next block
    travels, and bfloat16 is charged as bfloat16 (XLA:CPU's widened copies once made it 1.83x)."""
    mesh = jax.make_mesh((8,), ("i",))
    fn = jax.shard_map(_ring_all_gather, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=False)
    cost = _cost(fn, mesh, _struct(mesh, (8 * 4096, 4096), P("i")))
    block = 4096 * 4096 * 2
    book = 7 / 8 * 8 * block / 450e9
    last_write = 2 * block / (H100.hbm_bytes_per_s * calibration_for(H100).memory)
    assert cost.traffic == {"i": 7 * block}
    exposed = _exposed(project(cost, {"i": 8}, H100))
    assert exposed == pytest.approx(book + last_write, rel=1e-9)


def test_a_library_all_gather_over_two_hosts_takes_nccls_hierarchical_time():
    """NVLink inside each host and each GPU's own NIC across, at once: the NIC's share, B/8 at
    50 GB/s, not every byte at InfiniBand's rate."""
    mesh = jax.make_mesh((8,), ("i",))
    fn = jax.shard_map(
        lambda b: jax.lax.all_gather(b, "i", tiled=True), mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=False
    )
    cost = _cost(fn, mesh, _struct(mesh, (8 * 4096, 4096), P("i")))
    gathered = 8 * 4096 * 4096 * 2
    assert project(cost, {"i": 8}, TWO_HOSTS).links_s["i"] == pytest.approx(
        max(gathered / 8 / 50e9, 3 / 4 * gathered / 450e9)
    )


def _mlp(mesh, gather_w2_first: bool):
    """x @ w1 then @ w2, both weights gathered: the second gather may run under the first matmul."""

    def step(x, w1, w2):
        w1 = jax.lax.all_gather(w1, "i", tiled=True)
        if gather_w2_first:  # the second weight gathered before anything is multiplied, then needed at once
            w2 = jax.lax.all_gather(w2, "i", tiled=True)
            return (x @ w1) @ w2 + jnp.zeros((), x.dtype)
        h = x @ w1
        return h @ jax.lax.all_gather(w2, "i", tiled=True)

    fn = jax.shard_map(step, mesh=mesh, in_specs=(P(), P("i"), P("i")), out_specs=P(), check_vma=False)
    return _cost(
        fn,
        mesh,
        _struct(mesh, (4096, 1024), P()),
        _struct(mesh, (1024, 1024), P("i")),
        _struct(mesh, (1024, 1024), P("i")),
    )


def test_a_gather_the_first_matmul_needs_hides_nothing_and_the_next_hides_under_it():
    mesh = jax.make_mesh((8,), ("i",))
    cost = _mlp(mesh, gather_w2_first=False)
    projected = project(cost, {"i": 8}, H100)
    gathers = [c for c in cost.collectives if c.kind == "all-gather"]
    assert len(gathers) == 2
    first, second = sorted(gathers, key=lambda c: cost.beside(c).flops)
    assert cost.beside(first).flops == 0  # the first matmul waits for it, the second waits for that
    assert cost.beside(second).flops == 2 * 4096 * 1024 * 1024  # x @ w1 runs while w2 travels
    link = 7 / 8 * 1024 * 1024 * 2 / 450e9
    assert projected.hidden_s == pytest.approx(min(link, projected.compute_s / 2), rel=1e-9)
    assert projected.communication_s == pytest.approx(2 * link, rel=1e-9)


def test_the_same_dataflow_spelled_in_another_order_hides_the_same():
    """The order a program states its gathers in is the scheduler's to change: only the dataflow counts."""
    mesh = jax.make_mesh((8,), ("i",))
    a, b = (project(_mlp(mesh, first), {"i": 8}, H100) for first in (False, True))
    assert a.hidden_s == pytest.approx(b.hidden_s, rel=1e-9)


def _collective_matmul(mesh, overlapped: bool):
    """x's rows gathered round a ring and multiplied by w: step by step (each block's matmul runs
    while the next block travels), or every block first and one matmul after."""

    def ring(x, w):
        n, me = jax.lax.axis_size("i"), jax.lax.axis_index("i")
        out, block = jnp.zeros((n, x.shape[0], w.shape[1]), x.dtype), x
        for step in range(n):
            out = out.at[(me - step) % n].set(block @ w)
            if step < n - 1:
                block = jax.lax.ppermute(block, "i", [(i, (i + 1) % n) for i in range(n)])
        return out.reshape(-1, w.shape[1])

    def gathered_first(x, w):
        n, me = jax.lax.axis_size("i"), jax.lax.axis_index("i")
        right = [(i, (i + 1) % n) for i in range(n)]
        blocks, block = jnp.zeros((n,) + x.shape, x.dtype).at[me].set(x), x
        for step in range(1, n):
            block = jax.lax.ppermute(block, "i", right)
            blocks = blocks.at[(me - step) % n].set(block)
        return blocks.reshape(-1, x.shape[1]) @ w

    body = ring if overlapped else gathered_first
    shard = jax.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P(), check_vma=False)
    return _cost(shard, mesh, _struct(mesh, (8 * 2048, 8192), P("i")), _struct(mesh, (8192, 2048), P()))


def test_a_ring_that_multiplies_as_blocks_arrive_hides_its_transfers_and_one_that_gathers_first_does_not():
    mesh = jax.make_mesh((8,), ("i",))
    ring, gathers = _collective_matmul(mesh, True), _collective_matmul(mesh, False)
    block_matmul = 2 * 2048 * 8192 * 2048
    assert ring.flops == gathers.flops == 8 * block_matmul and ring.traffic == gathers.traffic
    assert all(ring.beside(c).flops >= block_matmul for c in ring.collectives)  # the block that just arrived
    assert all(gathers.beside(c).flops == 0 for c in gathers.collectives)  # only writes into place run beside them
    on_ring, on_gathers = (project(c, {"i": 8}, H100) for c in (ring, gathers))
    assert on_gathers.hidden_s == 0 and on_ring.hidden_share > 0.9 and on_gathers.total_s > on_ring.total_s


def test_a_cost_survives_its_record():
    mesh = jax.make_mesh((8,), ("i",))
    cost = _mlp(mesh, gather_w2_first=False)
    assert Cost.of(cost.record()) == cost


def test_a_peak_over_one_chips_memory_does_not_fit():
    over = Cost(0.0, 0.0, peak=17 * 2**30)
    assert not project(over, {"i": 8}, MACHINES["TPU v5e-8"]).fits
    assert project(over, {"i": 8}, H100).fits


def test_a_mesh_of_another_size_is_refused():
    with pytest.raises(ValueError, match="a mesh of 4 devices on 8 x H200's 8 chips"):
        project(Cost(1.0, 0.0), {"i": 4}, MACHINES["8 x H200"])


def test_a_measured_chip_is_calibrated_and_one_never_measured_is_at_its_peaks():
    cost = Cost(989.4e12 * 1e-3, 0.0, dots={"bf16": 1.0})
    tpu, h100 = project(cost, {"i": 8}, MACHINES["TPU v5e-8"]), project(cost, {"i": 8}, H100)
    assert tpu.per_call_s == 0 and tpu.calibrated == "" and tpu.compute_s == pytest.approx(989.4e12 * 1e-3 / 197e12)
    assert h100.per_call_s > 0 and "H200" in h100.calibrated and h100.compute_s > 1e-3
