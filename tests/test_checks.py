"""Notebook self-checks judge like the grader, in the student's kernel, against public oracles."""

from __future__ import annotations

import jax
import pytest

from autograder.checks import CheckFailed, check
from autograder.specs import get
from solutions import collectives as reference

from .helpers.course import ASSIGNMENT


def test_the_reference_passes_every_visible_check():
    for name in (
        "local_shape",
        "ring_all_gather",
        "ring_reduce_scatter",
        "ring_all_reduce",
        "sharded_layernorm",
        "fold_rng_over_axis",
    ):
        result = check(getattr(reference, name))
        assert result.passed and result.failures() == {}, result
        assert result.score == result.max_score == get(ASSIGNMENT).task(name).max_score - _hidden_points(name)
    table = repr(check(reference.ring_all_gather))
    assert "ring_all_gather: communication  2/2     passed" in table
    assert "bytes sent 1.00x" in table and "failed" not in table  # the communication part's note
    assert "bytes sent over 'i'" in table and "3x (technique), 1x (communication)" in table  # the signature
    html = check(reference.ring_all_gather)._repr_html_()
    assert "<td>ring_all_gather: values</td>" in html and "<table class='signature'>" in html


def _hidden_points(name: str) -> float:
    """Hidden cases stay with the instructor: a student's check scores the visible parts only."""
    return get(ASSIGNMENT).task(name).points.get("hidden values", 0.0)


def test_a_forbidden_collective_fails_with_the_reason():
    def ring_all_gather(x, axis_name):
        return jax.lax.all_gather(x, axis_name, tiled=True)

    with pytest.raises(
        CheckFailed, match="contains all-gather \\(all_gather\\); ring_all_gather may use only ppermute"
    ):
        check(ring_all_gather)


def test_an_error_in_the_function_is_shown_in_one_line():
    def fold_rng_over_axis(key, axis_name):
        raise NotImplementedError()

    with pytest.raises(CheckFailed, match="raised NotImplementedError"):
        check(fold_rng_over_axis)


def test_an_unknown_function_name_says_what_to_do():
    def my_gather(x, axis_name):
        return x

    with pytest.raises(CheckFailed, match="keep the name the exercise gives"):
        check(my_gather)


def test_a_globally_set_notebook_mesh_does_not_confuse_the_checks():
    mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Explicit,))
    jax.set_mesh(mesh)
    try:
        assert check(reference.ring_all_gather).passed
    finally:
        jax.set_mesh(None)


def test_probe_shows_what_the_grader_measures_of_a_function():
    """A reduce-scatter matmul on 8 devices: A 32 x 16 by B 16 x 8, each device multiplying its
    (32, 2) block of A's columns by its (2, 8) rows of B, and scattering C's partial sums."""
    from autograder.checks import probe
    from solutions.sharded_matmul import matmul_reduce_scatter

    program = probe(matmul_reduce_scatter)
    assert program.collectives == {"reduce-scatter": 1} and program.bytes_per_device == 7 / 8 * 32 * 8 * 4
    assert program.flops == 2 * 32 * 2 * 8 and program.peak_bytes and program.peak_bytes > (32 * 2 + 2 * 8) * 4
    assert f"multiplies {program.flops} FLOPs" in repr(program)


def test_probe_at_scale_projects_the_program_on_each_machine_and_runs_nothing():
    """The reduce-scatter matmul at its realistic size (32768 x 4096 by 4096 x 16384, bfloat16):
    compiled from shapes alone, its FLOPs and bytes are the closed forms, and each machine's
    projection is in the repr."""
    from autograder.checks import probe
    from autograder.core.machines import MACHINES
    from solutions.sharded_matmul import matmul_reduce_scatter

    program = probe(matmul_reduce_scatter, at_scale=True)
    m, k, n = 32768, 4096, 16384
    assert program.flops == 2 * m * (k // 8) * n and program.bytes_per_device == 7 / 8 * m * n * 2
    assert set(program.projected) == set(MACHINES)
    h100 = program.projected["8 x H100 SXM"]
    assert h100.compute_s == pytest.approx(2 * m * (k // 8) * n / 989e12)
    assert "8 x H100 SXM:" in repr(program) and "a roofline" in repr(program)


def test_probe_at_scale_says_which_parts_have_no_size_to_project_at():
    from autograder.checks import probe
    from solutions.collectives import fold_rng_over_axis

    with pytest.raises(CheckFailed, match="fold_rng_over_axis has no realistic size to project at"):
        probe(fold_rng_over_axis, at_scale=True)


def test_probe_at_scale_projects_a_training_step_too():
    """04's FSDP step at its realistic size: each weight gathered once and its gradient
    reduce-scattered once over 8 devices, five 1024 x 4096 x 16384 matmuls a device."""
    from autograder.checks import probe
    from solutions.fsdp_tensor_parallel import fsdp_step

    program = probe(fsdp_step, at_scale=True)
    weight = 4096 * 16384 * 4
    assert program.flops == 5 * 2 * 1024 * 4096 * 16384
    assert program.bytes_per_device == 4 * 7 / 8 * weight + 2 * 7 / 8 * 4  # and the loss, all-reduced
    assert "8 x H100 SXM:" in repr(program)
    with pytest.raises(CheckFailed, match=r"probe\(fn, at_scale=True\) projects it"):
        probe(fsdp_step)
