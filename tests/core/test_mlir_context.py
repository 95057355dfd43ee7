"""MLIR contexts shared between lowerings (``core/mlir_context.py``): the same programs, exported
and read back, byte for byte, with one context for many lowerings as with one each; a context
per thread, replaced after its uses; and a JAX without the function left as it is."""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import pytest
from jax._src.interpreters import mlir

from autograder.core import mlir_context
from autograder.core.mesh import MeshSpec


@pytest.fixture
def restored(monkeypatch):
    """JAX's own ``make_ir_context`` back in place after the test; locations without the Python
    source lines, as the runner lowers (else each call site is its own program)."""
    monkeypatch.setattr(mlir, "make_ir_context", mlir.make_ir_context)
    limit = jax.config.jax_traceback_in_locations_limit
    jax.config.update("jax_traceback_in_locations_limit", 0)
    yield
    jax.config.update("jax_traceback_in_locations_limit", limit)


def _ring(x):
    n = jax.lax.axis_size("i")
    return jax.lax.ppermute(x * 2.0, "i", [(j, (j + 1) % n) for j in range(n)]) + jnp.sin(x)


def _exported(scale: float) -> bytes:
    mesh = MeshSpec.parse("8:i").build()
    fn = jax.jit(jax.shard_map(lambda x: _ring(x) * scale, mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P("i")))
    arg = jax.ShapeDtypeStruct((16, 4), jnp.float32, sharding=jax.NamedSharding(mesh, jax.P("i")))
    exported = jax.export.export(fn)(arg)
    read_back = jax.export.deserialize(exported.serialize())
    return (
        bytes(exported.serialize())
        + read_back.mlir_module().encode()
        + jax.jit(read_back.call).lower(arg).as_text().encode()
    )


def test_shared_contexts_export_and_read_back_the_same_bytes(restored):
    alone = [_exported(s) for s in (1.0, 3.0, 1.0)]
    assert mlir_context.share_per_thread(uses=4)
    shared = [_exported(s) for s in (1.0, 3.0, 1.0)]
    assert shared == alone and alone[0] == alone[2] != alone[1]


def test_each_thread_has_its_own_context_replaced_after_its_uses(restored):
    assert mlir_context.share_per_thread(uses=3)
    here = [mlir.make_ir_context() for _ in range(4)]
    assert here[0] is here[1] is here[2] and here[3] is not here[0]
    there: list[object] = []
    worker = threading.Thread(target=lambda: there.extend(mlir.make_ir_context() for _ in range(2)))
    worker.start()
    worker.join()
    assert there[0] is there[1] and there[0] not in here
    assert mlir_context.share_per_thread() and mlir.make_ir_context() is here[3]  # asked twice: one wrapper


def test_a_jax_without_make_ir_context_is_left_as_it_is(monkeypatch):
    monkeypatch.delattr(mlir, "make_ir_context")
    assert not mlir_context.share_per_thread()
    assert not hasattr(mlir, "make_ir_context")
