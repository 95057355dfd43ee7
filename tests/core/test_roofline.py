"""The roofline against closed forms, on real compiled programs of 8 devices: a matmul takes its
FLOPs at each machine's peak, a ring all-gather and a reduce-scatter their (n - 1) blocks at the
rate of the slowest link their groups cross."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.core.machines import MACHINES
from autograder.core.quick_compile import compiler_options
from autograder.core.roofline import Cost, cost_of, crosses_hosts, project

ONE_HOST = [m for m in MACHINES.values() if m.hosts == 1]
TWO_HOSTS = MACHINES["2 hosts x 4 H100 over 400 Gb/s"]
BLOCK = (16, 32)  # one device's block: 16 x 32 float32
BLOCK_BYTES = 16 * 32 * 4


def _cost(fn, mesh, *args):
    with jax.set_mesh(mesh):
        lowered = jax.jit(fn).lower(*args)
        return cost_of(lowered, lowered.compile(compiler_options(mesh)), mesh)


def _sharded(mesh, shape, spec):
    return jax.device_put(
        jnp.asarray(np.arange(np.prod(shape), dtype=np.float32).reshape(shape)), NamedSharding(mesh, spec)
    )


def _gather(mesh, axis):
    x = _sharded(mesh, (BLOCK[0] * mesh.shape[axis], BLOCK[1]), P(axis))
    fn = jax.shard_map(
        lambda b: jax.lax.all_gather(b, axis, tiled=True), mesh=mesh, in_specs=P(axis), out_specs=P(), check_vma=False
    )
    return _cost(fn, mesh, x)


@pytest.mark.parametrize("machine", MACHINES.values(), ids=lambda m: m.name)
def test_a_matmul_takes_its_flops_at_the_chips_peak(machine):
    mesh = jax.make_mesh((8,), ("i",))
    a, b = _sharded(mesh, (64, 128), P()), _sharded(mesh, (128, 32), P())
    cost = _cost(lambda a, b: a @ b, mesh, a, b)
    projected = project(cost, {"i": 8}, machine)
    assert cost.flops == 2 * 64 * 128 * 32 and projected.links_s == {}
    assert projected.compute_s == pytest.approx(2 * 64 * 128 * 32 / machine.flops_per_s, rel=1e-12)
    assert projected.total_s == max(projected.compute_s, projected.memory_s)


@pytest.mark.parametrize("machine", ONE_HOST, ids=lambda m: m.name)
def test_a_ring_all_gather_sends_seven_blocks_at_the_links_rate(machine):
    cost = _gather(jax.make_mesh((8,), ("i",)), "i")
    projected = project(cost, {"i": 8}, machine)
    assert cost.traffic == {"i": 7 * BLOCK_BYTES}
    assert projected.links_s["i"] == pytest.approx(7 * BLOCK_BYTES / machine.within_host.bytes_per_s, rel=1e-12)


def test_a_reduce_scatter_sends_seven_eighths_of_its_input():
    mesh = jax.make_mesh((8,), ("i",))
    x = _sharded(mesh, (8 * BLOCK[0] * 8, BLOCK[1]), P("i"))  # each device: 8 blocks, summed and scattered
    fn = jax.shard_map(lambda b: jax.lax.psum_scatter(b, "i", tiled=True), mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    cost = _cost(fn, mesh, x)
    assert cost.traffic == {"i": 7 * BLOCK_BYTES}
    for machine in MACHINES.values():
        link = machine.across_hosts or machine.within_host  # eight devices in a ring: two hosts' span both
        assert project(cost, {"i": 8}, machine).links_s["i"] == pytest.approx(7 * BLOCK_BYTES / link.bytes_per_s)


def test_across_two_hosts_the_axis_that_spans_them_takes_the_network_and_the_other_nvlink():
    mesh = jax.make_mesh((2, 4), ("host", "gpu"))
    over_hosts, within = _gather(mesh, "host"), _gather(mesh, "gpu")
    assert over_hosts.traffic == {"host": 1 * BLOCK_BYTES} and within.traffic == {"gpu": 3 * BLOCK_BYTES}
    shape = {"host": 2, "gpu": 4}
    assert project(over_hosts, shape, TWO_HOSTS).links_s["host"] == pytest.approx(BLOCK_BYTES / 50e9)
    assert project(within, shape, TWO_HOSTS).links_s["gpu"] == pytest.approx(3 * BLOCK_BYTES / 450e9)


@pytest.mark.parametrize(
    "mesh, axes, crosses",
    [
        ({"host": 2, "gpu": 4}, ["host"], True),
        ({"host": 2, "gpu": 4}, ["gpu"], False),
        ({"host": 2, "gpu": 4}, ["host", "gpu"], True),
        ({"a": 4, "b": 2}, ["a"], True),  # devices 0-3 on one host: a=0,1 there, a=2,3 on the other
        ({"a": 4, "b": 2}, ["b"], False),
        ({"a": 2, "b": 4}, ["b", "a"], True),
    ],
)
def test_which_groups_span_two_hosts(mesh, axes, crosses):
    assert crosses_hosts(mesh, axes, per_host=4) == crosses


def test_communication_hides_under_compute_up_to_the_computes_own_time():
    machine = MACHINES["8 x H100 SXM"]
    flops = 989e12 * 2e-3  # 2 ms of compute
    cost = Cost(flops, 0.0, {"i": 450e9 * 3e-3}, overlap=0.5)  # 3 ms on NVLink, half of it may overlap
    projected = project(cost, {"i": 8}, machine)
    assert projected.compute_s == pytest.approx(2e-3) and projected.communication_s == pytest.approx(3e-3)
    assert projected.hidden_s == pytest.approx(0.5 * 2e-3) and projected.hidden_share == pytest.approx(1 / 3)
    assert projected.total_s == pytest.approx(2e-3 + 3e-3 - 1e-3)


def test_a_peak_over_one_chips_memory_does_not_fit():
    over = Cost(0.0, 0.0, peak=17 * 2**30)
    assert not project(over, {"i": 8}, MACHINES["TPU v5e-8"]).fits
    assert project(over, {"i": 8}, MACHINES["8 x H100 SXM"]).fits


def test_a_mesh_of_another_size_or_axis_is_refused():
    with pytest.raises(ValueError, match="a mesh of 4 devices on 8 x H200's 8 chips"):
        project(Cost(1.0, 0.0), {"i": 4}, MACHINES["8 x H200"])
    with pytest.raises(ValueError, match="no mesh axis j"):
        crosses_hosts({"i": 8}, ["j"], per_host=4)


def test_every_machine_says_where_its_figures_come_from():
    for machine in MACHINES.values():
        assert machine.source and machine.within_host.source, machine.name
        assert machine.chips == machine.hosts * machine.per_host == 8
