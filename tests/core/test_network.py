"""Collectives' times on each machine's network and the chips' matmul peaks, against closed forms
worked by hand from the rules in ``core/network.py`` and the figures in ``core/machines.py``."""

from __future__ import annotations

import dataclasses

import pytest

from autograder.core.machines import MACHINES, Grid, Switched
from autograder.core.network import collective_seconds

ONE_HOST = [MACHINES["8 x H100 SXM"], MACHINES["8 x H200"]]
TWO_HOSTS = MACHINES["2 hosts x 4 H100 over 400 Gb/s"]
TPU = MACHINES["TPU v5e-8"]
NVLINK, NIC, ICI = 450e9, 50e9, 4.5e10  # one way: per GPU, per GPU's NIC, per TPU link
A = 256 * 2**20  # the collective's full per-device array
RING = {"i": 8}  # on the TPU: the ring round the 2 x 4 grid
ROWS = {"x": 2, "y": 4}  # y: a row of 4 chips on the TPU, the 4 GPUs of a host on two hosts
PAIRS = {"x": 4, "y": 2}  # y: neighbours in a row on the TPU
CUBE = {"a": 2, "b": 2, "c": 2}


def seconds(kind, axes, mesh, machine, pairs=None, nbytes=A):
    return collective_seconds(kind, axes, nbytes, mesh, machine, pairs)


def approx(value):
    return pytest.approx(value, rel=1e-12)


def _row_major_tpu():
    """The TPU with mesh device i on chip i (rows of 4), where an axis can be a 2 x 2 square."""
    return dataclasses.replace(TPU, network=dataclasses.replace(TPU.network, placement=tuple(range(8))))


# GPUs inside one host: NVSwitch, every pair at NVLink's whole rate


@pytest.mark.parametrize("machine", ONE_HOST, ids=lambda m: m.name)
def test_inside_a_host_each_gpu_sends_its_share_at_nvlinks_rate(machine):
    assert seconds("all-gather", ["i"], RING, machine) == approx(7 / 8 * A / NVLINK)
    assert seconds("reduce-scatter", ["i"], RING, machine) == approx(7 / 8 * A / NVLINK)
    assert seconds("all-reduce", ["i"], RING, machine) == approx(2 * 7 / 8 * A / NVLINK)
    assert seconds("all-to-all", ["i"], RING, machine) == approx(7 / 8 * A / NVLINK)
    assert seconds("all-gather", ["y"], ROWS, machine) == approx(3 / 4 * A / NVLINK)
    shift = [(i, (i + 3) % 8) for i in range(8)]  # no links to share through a switch
    assert seconds("collective-permute", ["i"], RING, machine, shift) == approx(A / NVLINK)


# Two hosts of 4 GPUs: NCCL's hierarchical algorithms, NVLink and each GPU's NIC at once


def test_a_library_all_gather_over_both_hosts_takes_nvlink_and_the_nics_at_once():
    took = seconds("all-gather", ["i"], RING, TWO_HOSTS)
    # NIC: 1/8 of A at 50 GB/s (0.671 ms); NVLink: 3/4 of A at 450 GB/s (0.447 ms), under it
    assert took == approx(A / 8 / NIC)
    assert took == pytest.approx(0.671e-3, rel=1e-3)
    assert 7 * took == pytest.approx(4.70e-3, rel=1e-3)  # a seventh of every byte over InfiniBand
    assert seconds("reduce-scatter", ["i"], RING, TWO_HOSTS) == approx(A / 8 / NIC)
    assert seconds("all-reduce", ["i"], RING, TWO_HOSTS) == approx(2 * A / 8 / NIC)


def test_an_all_to_all_over_both_hosts_sends_the_other_hosts_pieces_by_nic():
    # NIC: (8 - 4)/8 of A at 50 GB/s; NVLink: 3/8 of A at 450 GB/s
    assert seconds("all-to-all", ["i"], RING, TWO_HOSTS) == approx(4 / 8 * A / NIC)


def test_the_slower_of_nvlink_and_the_nic_sets_the_time_not_their_sum():
    fast_nic = dataclasses.replace(TWO_HOSTS.network.nic, bytes_per_s=1e12)
    machine = dataclasses.replace(TWO_HOSTS, network=dataclasses.replace(TWO_HOSTS.network, nic=fast_nic))
    # NIC 1/8 of A at 1 TB/s (0.034 ms) under NVLink's 3/4 of A at 450 GB/s (0.447 ms)
    assert seconds("all-gather", ["i"], RING, machine) == approx(3 / 4 * A / NVLINK)
    assert seconds("all-to-all", ["i"], RING, machine) == approx(3 / 8 * A / NVLINK)  # over 4/8 * A / 1e12


def test_on_two_hosts_an_axis_inside_a_host_uses_nvlink_and_one_across_them_the_nics():
    assert seconds("all-gather", ["y"], ROWS, TWO_HOSTS) == approx(3 / 4 * A / NVLINK)
    assert seconds("all-reduce", ["y"], ROWS, TWO_HOSTS) == approx(2 * 3 / 4 * A / NVLINK)
    assert seconds("all-to-all", ["y"], ROWS, TWO_HOSTS) == approx(3 / 4 * A / NVLINK)
    # x pairs GPU i with GPU i + 4: one per host, all by NIC
    assert seconds("all-gather", ["x"], ROWS, TWO_HOSTS) == approx(1 / 2 * A / NIC)
    assert seconds("all-to-all", ["x"], ROWS, TWO_HOSTS) == approx(1 / 2 * A / NIC)


def test_a_permute_goes_at_the_nics_rate_only_if_a_pair_crosses_hosts():
    inside = [(i, 4 * (i // 4) + (i + 1) % 4) for i in range(8)]  # a ring in each host
    assert seconds("collective-permute", ["i"], RING, TWO_HOSTS, inside) == approx(A / NVLINK)
    across = [(i, (i + 4) % 8) for i in range(8)]
    assert seconds("collective-permute", ["i"], RING, TWO_HOSTS, across) == approx(A / NIC)
    assert seconds("collective-permute", ["i"], RING, TWO_HOSTS, [(0, 1), (3, 4)]) == approx(A / NIC)


# TPU v5e-8: a 2 x 4 grid of ICI links, 4.5e10 B/s one way each, no wraparound


def test_a_ring_of_one_hop_links_sends_both_ways_round_it():
    assert seconds("all-gather", ["i"], RING, TPU) == approx(7 / 8 * A / (2 * ICI))
    assert seconds("reduce-scatter", ["i"], RING, TPU) == approx(7 / 8 * A / (2 * ICI))
    assert seconds("all-reduce", ["i"], RING, TPU) == approx(2 * 7 / 8 * A / (2 * ICI))


def test_a_line_without_wraparound_is_bound_by_its_end_link():
    assert seconds("all-gather", ["y"], ROWS, TPU) == approx(3 / 4 * A / ICI)
    assert seconds("reduce-scatter", ["y"], ROWS, TPU) == approx(3 / 4 * A / ICI)
    assert seconds("all-reduce", ["y"], ROWS, TPU) == approx(2 * 3 / 4 * A / ICI)
    assert seconds("all-gather", ["y"], PAIRS, TPU) == approx(1 / 2 * A / ICI)


def test_four_chips_on_a_square_ring_take_half_the_time_of_four_on_a_line():
    tpu = _row_major_tpu()
    square = seconds("all-gather", ["a", "c"], CUBE, tpu)  # chips 0, 1, 4, 5 (and 2, 3, 6, 7)
    line = seconds("all-gather", ["b", "c"], CUBE, tpu)  # chips 0..3 (and 4..7): a row each
    assert square == approx(3 / 4 * A / (2 * ICI))
    assert line == approx(3 / 4 * A / ICI)
    assert line / square == approx(2.0)


def test_an_all_to_all_is_bound_by_the_middle_cut():
    # (n/2)^2 pieces of A/n each way across the cut, over 2 links each way (a ring) or 1 (a line)
    assert seconds("all-to-all", ["i"], RING, TPU) == approx(4**2 * A / 8 / (2 * ICI))
    assert seconds("all-to-all", ["y"], ROWS, TPU) == approx(2**2 * A / 4 / ICI)
    assert seconds("all-to-all", ["y"], PAIRS, TPU) == approx(1**2 * A / 2 / ICI)
    assert seconds("all-to-all", ["a", "c"], CUBE, _row_major_tpu()) == approx(2**2 * A / 4 / (2 * ICI))


def test_a_permute_takes_its_operand_times_the_sends_on_its_busiest_link():
    neighbours = [(i, (i + 1) % 8) for i in range(8)]  # round the ring: one link each
    assert seconds("collective-permute", ["i"], RING, TPU, neighbours) == approx(A / ICI)
    alone = [(0, 3)]  # 3 hops along row 0, sharing them with no one
    assert seconds("collective-permute", ["y"], ROWS, TPU, alone) == approx(A / ICI)
    # 3 ahead round the ring: mesh 0 -> 3 and 1 -> 4 (chips (0,1) -> (1,3)) both cross (0,1)->(0,2)
    shift = [(i, (i + 3) % 8) for i in range(8)]
    assert seconds("collective-permute", ["i"], RING, TPU, shift) == approx(2 * A / ICI)
    # 2 ahead in each row of 4: 0 -> 2 and 1 -> 3 both cross the row's middle link
    by_two = [(4 * (i // 4) + i % 4, 4 * (i // 4) + (i + 2) % 4) for i in range(8)]
    assert seconds("collective-permute", ["y"], ROWS, TPU, by_two) == approx(2 * A / ICI)


def test_jax_places_a_2x4_meshs_leading_axis_on_chips_apart():
    # mesh devices 0..7 sit on chips 0 1 2 3 / 7 6 5 4: x pairs chip 0 with 7, 1 with 6, 2 with 5,
    # 3 with 4, 2 to 4 hops apart; routed along the rows first, two pairs share each middle link
    assert seconds("all-gather", ["x"], ROWS, TPU) == approx(A / ICI)
    assert seconds("all-gather", ["y"], PAIRS, TPU) == approx(A / 2 / ICI)  # neighbours: half that


# Nothing to send, and what is refused


@pytest.mark.parametrize("machine", MACHINES.values(), ids=lambda m: m.name)
@pytest.mark.parametrize("kind", ["all-gather", "reduce-scatter", "all-reduce", "all-to-all", "collective-permute"])
def test_a_group_of_one_or_no_bytes_takes_no_time(machine, kind):
    assert seconds(kind, [], ROWS, machine, [(0, 0)]) == 0.0
    assert seconds(kind, ["y"], {"x": 8, "y": 1}, machine, [(3, 3)]) == 0.0
    assert seconds(kind, ["i"], RING, machine, [(0, 5)], nbytes=0) == 0.0


def test_an_unknown_kind_axis_or_mesh_is_refused():
    with pytest.raises(ValueError, match="unknown collective 'all-gather-start'"):
        seconds("all-gather-start", ["i"], RING, TPU)
    with pytest.raises(ValueError, match="no mesh axis z"):
        seconds("all-gather", ["z"], RING, TPU)
    with pytest.raises(ValueError, match="needs its"):
        seconds("collective-permute", ["i"], RING, TPU)
    with pytest.raises(ValueError, match="a mesh of 4 devices"):
        seconds("all-gather", ["i"], {"i": 4}, TPU)


# The networks as built


def test_each_network_is_described_as_it_is_built():
    for machine in ONE_HOST:
        assert machine.network == Switched(machine.network.nvlink) and machine.network.nvlink.bytes_per_s == NVLINK
    assert isinstance(TWO_HOSTS.network, Switched) and TWO_HOSTS.hosts == 2
    assert (TWO_HOSTS.network.nvlink.bytes_per_s, TWO_HOSTS.network.nic.bytes_per_s) == (NVLINK, NIC)
    grid = TPU.network
    assert isinstance(grid, Grid) and grid.shape == (2, 4) and grid.link.bytes_per_s == ICI
    assert sorted(grid.placement) == list(range(8))
    cells = [divmod(chip, 4) for chip in grid.placement]
    hops = [abs(r - r2) + abs(c - c2) for (r, c), (r2, c2) in zip(cells, cells[1:] + cells[:1])]
    assert hops == [1] * 8  # consecutive mesh devices, the last and the first too, are neighbours


# Matmul peaks per dtype


@pytest.mark.parametrize("machine", [*ONE_HOST, TWO_HOSTS], ids=lambda m: m.name)
def test_hopper_peaks_per_dtype_and_precision(machine):
    peak = machine.peak_flops
    assert peak("bf16") == peak("f16") == approx(989.4e12)
    assert peak("f8e4m3fn") == peak("f8e5m2") == peak("s8") == approx(1978.9e12)
    assert peak("f32") == peak("f32", "default") == peak("f32", "high") == approx(494.7e12)  # TF32
    assert peak("f32", "highest") == approx(66.9e12)
    assert peak("f64") == approx(66.9e12)  # FP64 tensor cores
    assert peak("f8E4M3FN") == peak("i8") == approx(1978.9e12)  # StableHLO's spelling
    assert peak("c64") == approx(66.9e12)  # no rate listed: the f32 rate at highest precision
    assert peak("bf16", "highest") == approx(989.4e12)  # precision leaves a bf16 dot alone


def test_the_h200s_measured_f32_matmuls_fit_their_peaks():
    h200, flops = MACHINES["8 x H200"], 2 * 8192**3
    assert h200.peak_flops("f32", "highest") < flops / 2.53e-3 < h200.peak_flops("f32")  # TF32, not fp32
    assert flops / 21.4e-3 < h200.peak_flops("f32", "highest")


def test_tpu_peaks_per_dtype_and_precision():
    peak = TPU.peak_flops
    assert peak("bf16") == peak("f32") == peak("f8e4m3fn") == approx(197e12)  # f32: one bf16 pass; fp8 as bf16
    assert peak("f32", "high") == approx(197e12 / 3)  # 3 bf16 passes
    assert peak("f32", "highest") == approx(197e12 / 6)  # 6 bf16 passes
    assert peak("s8") == approx(394e12)
    assert peak("f16") == peak("f64") == approx(197e12 / 6)  # no rate listed: f32 at highest


def test_an_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="precision 'fastest'"):
        TPU.peak_flops("f32", "fastest")


@pytest.mark.parametrize("machine", MACHINES.values(), ids=lambda m: m.name)
def test_every_figure_has_a_source(machine):
    figures = [*machine.matmul.values()]
    links = [machine.network.link] if isinstance(machine.network, Grid) else [machine.network.nvlink]
    links += [machine.network.nic] if isinstance(machine.network, Switched) and machine.network.nic else []
    assert "f32:highest" in machine.matmul and {"bf16", "f32", "f32:high"} <= set(machine.matmul)
    for figure in [*figures, *links]:
        assert len(figure.source) > 40, figure
    assert machine.source and (not isinstance(machine.network, Grid) or "wraparound" in machine.network.source)
