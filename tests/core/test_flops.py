"""FLOPs read from the compiled HLO against closed forms: a (m, k) @ (k, n) is 2mkn, whatever
fusions, loops, conditionals and device counts wrap it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from autograder.core.flops import program_flops
from autograder.core.quick_compile import known_options
from autograder.harness.shard_map import build


def _flops(fn, *args):
    return program_flops(jax.jit(fn).lower(*args).compile(known_options()).as_text())


def test_a_matmul_is_two_flops_per_multiply_add():
    assert _flops(lambda a, b: a @ b, jnp.ones((8, 16)), jnp.ones((16, 4))) == 2 * 8 * 16 * 4


def test_a_fused_program_counts_each_of_its_matmuls():
    """XLA:CPU puts each dot in a fusion of its own; the elementwise tanh between them is no FLOP."""
    a, b = jnp.ones((8, 16)), jnp.ones((16, 4))
    assert _flops(lambda a, b: jnp.tanh(a @ b) @ b.T, a, b) == 2 * (8 * 16 * 4) * 2


def test_a_batched_contraction_counts_every_batch():
    a, b = jnp.ones((3, 8, 16)), jnp.ones((3, 16, 4))
    assert _flops(lambda a, b: jnp.einsum("bij,bjk->bik", a, b), a, b) == 3 * 2 * 8 * 16 * 4


def test_a_loop_counts_its_body_by_its_trip_count():
    body = lambda i, x: x @ jnp.eye(16)  # noqa: E731
    assert _flops(lambda a: jax.lax.fori_loop(0, 5, body, a), jnp.ones((16, 16))) == 5 * 2 * 16**3


def test_a_convolution_counts_its_window_and_input_features():
    conv = lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))  # noqa: E731
    assert _flops(conv, jnp.ones((1, 8, 8, 3)), jnp.ones((3, 3, 3, 16))) == 2 * (8 * 8 * 16) * (3 * 3 * 3)


def test_a_conditional_counts_its_costliest_branch():
    """One branch runs on a device; the busiest device's count bounds every device's."""
    a = jnp.ones((16, 16))
    assert _flops(lambda p, a: jax.lax.cond(p, lambda: a @ a, lambda: (a @ a) @ a), True, a) == 2 * 2 * 16**3


def test_a_ring_counts_one_device_s_blocks_on_every_step():
    """A collective matmul on 8 devices: each multiplies its (4, 16) blocks by its (16, 1) columns, 8 times."""

    def ring(a, b, axis_name):
        out = a @ b
        for _ in range(jax.lax.axis_size(axis_name) - 1):
            a = jax.lax.ppermute(a, axis_name, [(i, (i + 1) % 8) for i in range(8)])
            out = out + a @ b
        return out

    sig = {
        "mesh": "8:i",
        "axis": "i",
        "kwargs": {},
        "out_spec": None,
        "inputs": [
            {"shape": [32, 16], "dtype": "float32", "spec": [["i"]]},
            {"shape": [16, 8], "dtype": "float32", "spec": [None, ["i"]]},
        ],
    }
    wrapped, structs, mesh = build(ring, sig)
    with jax.set_mesh(mesh):
        hlo = wrapped.lower(*structs).compile(known_options()).as_text()
    assert program_flops(hlo) == 8 * 2 * 4 * 16 * 1


LOOP = """HloModule m

%body (p: (s32[], f32[4,4])) -> (s32[], f32[4,4]) {
  %p = (s32[], f32[4,4]{1,0}) parameter(0)
  %x = f32[4,4]{1,0} get-tuple-element(%p), index=1
  %d = f32[4,4]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (s32[], f32[4,4]{1,0}) tuple(%i, %d)
}

ENTRY %main (a: f32[4,4]) -> f32[4,4] {
  %a = f32[4,4]{1,0} parameter(0)
  ROOT %w = (s32[], f32[4,4]{1,0}) while(%init), condition=%cond, body=%body{trip}
}
"""


@pytest.mark.parametrize("trip, flops", [(', backend_config={"known_trip_count":{"n":"3"}}', 3 * 2 * 64), ("", None)])
def test_a_loop_of_unknown_length_that_multiplies_cannot_be_counted(trip, flops):
    assert program_flops(LOOP.replace("{trip}", trip)) == flops


# XLA's GPU compiler turns a dot into a cuBLAS call, a tuple of the result and a workspace (the
# form of XLA's own GPU tests, gemm_rewrite_test and autotuner_pass_test).
CUBLAS = """HloModule module

ENTRY %main (arg0: f32[100,60], arg1: f32[60,30]) -> f32[100,30] {
  %arg0 = f32[100,60]{1,0} parameter(0)
  %arg1 = f32[60,30]{1,0} parameter(1)
  %custom-call.1 = (f32[100,30]{1,0}, s8[80000]{0}) custom-call(%arg0, %arg1), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  ROOT %get-tuple-element = f32[100,30]{1,0} get-tuple-element(%custom-call.1), index=0
}
"""


def test_a_cublas_matmul_counts_as_the_dot_it_replaced():
    assert program_flops(CUBLAS) == 2 * 100 * 60 * 30
