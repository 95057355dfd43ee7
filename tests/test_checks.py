"""Notebook self-checks judge like the grader, in the student's kernel, against public oracles."""

from __future__ import annotations

from html import escape

import jax
import pytest

from autograder.checks import CheckFailed, check
from autograder.core.units import duration, quantity
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
    assert ">ring_all_gather: values</td>" in html and "<table class='signature'>" in html
    assert "ring_all_gather: 8 of 8 points; every part passes" in table.splitlines()[0]
    assert "judged 8 of the cell's 10 points; the other 2 (hidden values" in table  # item 5: points explained


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


def test_a_failing_check_shows_the_whole_verdict_then_one_line_of_error(capsys):
    """Outside a notebook the verdict is printed as text, every part with its points (the values
    that pass too), the signature and each device's steps; the error a notebook shows is one line."""

    def ring_all_gather(x, axis_name):  # a ring that sends each block straight to where it goes
        n, me = jax.lax.axis_size(axis_name), jax.lax.axis_index(axis_name)
        blocks = jax.numpy.zeros((n,) + x.shape, x.dtype).at[me].set(x)
        for step in range(1, n):
            block = jax.lax.ppermute(x, axis_name, [(i, (i + step) % n) for i in range(n)])
            blocks = blocks.at[(me - step) % n].set(block)
        return blocks.reshape((n * x.shape[0],) + x.shape[1:])

    with pytest.raises(CheckFailed) as failed:
        check(ring_all_gather)
    shown = capsys.readouterr().out
    headline = "ring_all_gather: 3 of 8 points; technique, communication fail (the table says why)"
    assert shown.splitlines()[0] == headline
    assert "ring_all_gather: values         3/3     passed" in shown  # the part that passes is there too
    assert "bytes sent over 'i'" in shown and "What each device sends and multiplies, step by step" in shown
    assert "! it came past a neighbour" in shown
    assert failed.value._render_traceback_() == [f"CheckFailed: {headline}"]
    assert "not its neighbours" in str(failed.value)  # the reasons stay in the exception for code that reads them


def test_an_error_in_the_function_is_shown_in_one_line():
    def fold_rng_over_axis(key, axis_name):
        raise NotImplementedError()

    with pytest.raises(CheckFailed, match="raised NotImplementedError") as failed:
        check(fold_rng_over_axis)
    (line,) = failed.value._render_traceback_()
    assert line.endswith("not written yet: it raises NotImplementedError"), line


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
    shown = repr(program)  # every figure with its unit, the case with its options
    assert shown.startswith(
        "matmul_reduce_scatter(32x16 float32, 16x8 float32) on mesh 8:i, axis 'i', float32, (32, 2) (2, 8) per device: "
        "runs 1 reduce-scatter; per device, sends 896 B, multiplies 1.02 kFLOP and needs "
    ), shown
    assert shown.endswith(f"{quantity(program.peak_bytes, 'B')} at its peak") and "FLOPs" not in shown
    assert escape(shown) in program._repr_html_()
    other = get("02_sharded_matmul").task("matmul_reduce_scatter").cases[1]  # case= as before
    assert f"on {other.label()}: runs" in repr(probe(matmul_reduce_scatter, case=other))
    assert repr(probe(matmul_reduce_scatter, case=1)) == repr(probe(matmul_reduce_scatter, case=other))
    with pytest.raises(CheckFailed, match="matmul_reduce_scatter has 3 cases: pass case=0 to case=2"):
        probe(matmul_reduce_scatter, case=3)


def test_probe_at_scale_projects_the_program_on_each_machine_and_runs_nothing():
    """The reduce-scatter matmul at its realistic size (32768 x 4096 by 4096 x 16384, bfloat16):
    compiled from shapes alone, its FLOPs and bytes are the closed forms, and each machine's
    projection is in the repr."""
    from autograder.checks import probe
    from autograder.core.calibration import calibration_for
    from autograder.core.machines import MACHINES
    from autograder.grading.reports.scale_view import MODEL
    from solutions.sharded_matmul import matmul_reduce_scatter

    program = probe(matmul_reduce_scatter, at_scale=True)
    m, k, n = 32768, 4096, 16384
    assert program.flops == 2 * m * (k // 8) * n and program.bytes_per_device == 7 / 8 * m * n * 2
    assert set(program.projected) == set(MACHINES)
    h100 = program.projected["8 x H100 SXM"]
    bf16 = calibration_for(MACHINES["8 x H100 SXM"]).matmul["bf16"]  # the share of its peak an H200 reached
    assert h100.compute_s == pytest.approx(2 * m * (k // 8) * n / (989.4e12 * bf16))
    # The reference's own record at that size beside it: the reference is its own match.
    assert program.reference is not None and program.reference.flops == program.flops
    assert set(program.reference_projected) == set(MACHINES)
    lines = repr(program).splitlines()
    scale = get("02_sharded_matmul").task("matmul_reduce_scatter").at_scale
    assert lines[0].endswith(f"on {scale.case.label()}: runs 1 reduce-scatter"), lines[0]
    assert lines[1].split() == ["per", "device", "yours", "reference", "ratio"]
    assert lines[2].split() == ["sends", "940", "MB", "940", "MB", "1.00x"]  # 7/8 of 32768 x 16384 bfloat16
    assert lines[3].split() == ["multiplies", "550", "GFLOP", "550", "GFLOP", "1.00x"]
    peak = quantity(program.peak_bytes, "B")
    assert lines[4].startswith("  needs at its peak") and lines[4].endswith(f"{peak}    {peak}  1.00x"), lines[4]
    assert lines[5] == f"{MODEL}:" and lines[6].split()[:4] == ["machine", "yours", "reference", "ratio"]
    row = next(line for line in lines if line.startswith("  8 x H100 SXM "))
    assert f"{duration(h100.total_s)}  " in row and "1.00x  call 68.0 µs + max(compute " in row and " ms" in row


def test_probe_at_scale_without_the_course_s_records_says_so_in_one_line(monkeypatch, tmp_path):
    """A copy of the course without the records a release ships: the student's figures and times
    alone, and one line that says why the reference's are not beside them."""
    from autograder.checks import probe
    from autograder.grading.pipeline import expected
    from solutions.sharded_matmul import matmul_reduce_scatter

    monkeypatch.setenv(expected.ENV, str(tmp_path))  # a folder that holds no records
    program = probe(matmul_reduce_scatter, at_scale=True)
    assert program.reference is None and program.reference_projected == {} and program.projected
    lines = repr(program).splitlines()
    assert lines[1].split() == ["per", "device", "yours"] and lines[2].split() == ["sends", "940", "MB"]
    said = [line for line in lines if line.startswith("no reference beside it: ")]
    assert len(said) == 1 and "no records to check 02_sharded_matmul against" in said[0], lines
    assert lines[7].split() == ["machine", "yours", "where", "yours", "goes"]


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
    rows = [line.split() for line in repr(program).splitlines()]
    assert ["multiplies", "687", "GFLOP", "687", "GFLOP", "1.00x"] in rows  # the reference's step beside it
    assert any(line.startswith("  8 x H100 SXM  ") for line in repr(program).splitlines())
    with pytest.raises(CheckFailed, match=r"probe\(fn, at_scale=True\) projects it"):
        probe(fsdp_step)
