"""Memory traffic at the program's own dtypes, against closed forms, on programs XLA:CPU compiles
with its habits (bfloat16 widened to float32, whole attentions fused into one loop nest, layout
copies, a loop's buffer widened around each update): none of them reaches the figure."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from autograder.core.hlo_text import parse_module
from autograder.core.program_work import ProgramWork

S = jax.ShapeDtypeStruct
M, K, N = 64, 128, 32


def _bytes(fn, *structs, donate=()) -> float:
    work = ProgramWork(parse_module(jax.jit(fn, donate_argnums=donate).lower(*structs).compile().as_text())).total()
    assert work is not None
    return work.bytes


def _attention(q, k, v):
    return jax.nn.softmax((q @ k.T).astype(jnp.float32), axis=-1).astype(q.dtype) @ v


def _ring_into_buffer(x):
    """Eight blocks written one by one into a buffer, in a loop: the loop carries it in place."""
    out = jnp.zeros((8,) + x.shape, x.dtype)
    return jax.lax.fori_loop(0, 8, lambda i, out: jax.lax.dynamic_update_index_in_dim(out, x * i, i, 0), out)


@pytest.mark.parametrize("dtype, size", [(jnp.float32, 4), (jnp.bfloat16, 2)])
def test_a_matmul_reads_its_operands_and_writes_its_result_once(dtype, size):
    assert _bytes(lambda a, b: a @ b, S((M, K), dtype), S((K, N), dtype)) == (M * K + K * N + M * N) * size


def test_an_activation_after_a_matmul_reads_and_writes_the_result_again():
    plain = _bytes(lambda a, b: a @ b, S((M, K), jnp.bfloat16), S((K, N), jnp.bfloat16))
    assert (
        _bytes(lambda a, b: jax.nn.relu(a @ b), S((M, K), jnp.bfloat16), S((K, N), jnp.bfloat16))
        == plain + 2 * M * N * 2
    )


def test_elementwise_work_reads_and_writes_each_value_once():
    assert _bytes(lambda x: x * 2 + 1, S((M, K), jnp.bfloat16)) == 2 * M * K * 2


def test_attention_writes_its_scores_and_reads_them_back_as_a_gpu_does():
    """At 4096 tokens XLA:CPU fuses an attention into one loop nest; a GPU without a fused attention
    kernel writes the scores, reads them to normalise, writes the probabilities and reads them
    again. In bfloat16 or float32: the CPU folds the program's widening of the scores into the
    matmul, so which of the two the program meant is not known."""
    t, d = 4096, 128
    fixed = (3 * t * d + t * d) * 2  # q, k and v read, the result written
    got = _bytes(_attention, *(S((t, d), jnp.bfloat16),) * 3)
    assert fixed + 4 * t * t * 2 <= got <= fixed + 4 * t * t * 4


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda a, b: a @ b, ((M, K), (K, N))),
        (lambda a, b: jax.nn.gelu(a @ b) @ b.T, ((M, K), (K, N))),
        (_ring_into_buffer, ((16, 32),)),
        (lambda x: jnp.transpose(x) @ x, ((K, M),)),
    ],
    ids=["matmul", "mlp", "loop into a buffer", "transpose"],
)
def test_bfloat16_moves_half_the_bytes_of_float32(fn, shapes):
    """The CPU computes bfloat16 in float32; the figure is the program's, so exactly half."""
    wide = _bytes(fn, *(S(s, jnp.float32) for s in shapes))
    assert _bytes(fn, *(S(s, jnp.bfloat16) for s in shapes)) == wide / 2


def test_a_loop_writes_each_update_in_place_not_its_whole_buffer():
    block = 16 * 32 * 4
    # the zeros written once; each of 8 trips reads its block and writes it into place
    assert _bytes(_ring_into_buffer, S((16, 32), jnp.float32)) == 8 * block + 8 * 2 * block


@pytest.mark.parametrize(
    "write",
    [
        lambda cache, x, rows: jax.lax.dynamic_update_slice(cache, x, (rows[0], 0)),
        lambda cache, x, rows: cache.at[rows].set(x),  # a scatter: XLA:CPU's loop carries the buffer
    ],
    ids=["dynamic_update_slice", "scatter"],
)
def test_an_argument_written_in_place_is_copied_whole_first_unless_donated(write):
    """A decode step's cache: XLA writes into an argument only once it has copied it, on any chip,
    unless the argument was donated. The copy is charged, read and written, and only then."""
    cache, rows = (1024, 256), 4
    structs = (S(cache, jnp.float32), S((rows, cache[1]), jnp.float32), S((rows,), jnp.int32))
    donated = _bytes(write, *structs, donate=(0,))
    assert _bytes(write, *structs) == donated + 2 * cache[0] * cache[1] * 4
