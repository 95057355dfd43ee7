"""A compiled program's text is parsed once and the parse is shared by every reader of it (the
census, the FLOPs, the timeline, the roofline): none of them may change what the next one reads."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.core.flops import program_flops
from autograder.core.hlo import hlo_census
from autograder.core.hlo_text import callees, multiplicities, parse_module
from autograder.core.roofline import cost_of
from autograder.core.timeline import timeline

N = 8
RIGHT = [(i, (i + 1) % N) for i in range(N)]


def _ring_matmul(x, w):
    """A loop whose body sends a block and multiplies: a while, fusions and a collective."""

    def step(_, carry):
        block, total = carry
        return jax.lax.ppermute(block, "i", RIGHT), total + block @ w

    total = jax.lax.pcast(jnp.zeros((x.shape[0], w.shape[1]), x.dtype), "i", to="varying")
    return jax.lax.fori_loop(0, N - 1, step, (x, total))[1]


def _program():
    mesh = jax.make_mesh((N,), ("i",))
    fn = jax.jit(jax.shard_map(_ring_matmul, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i")))
    args = (
        jax.ShapeDtypeStruct((N * 4, 16), jnp.float32, sharding=NamedSharding(mesh, P("i"))),
        jax.ShapeDtypeStruct((16, 8), jnp.float32, sharding=NamedSharding(mesh, P())),
    )
    lowered = fn.lower(*args)
    return lowered, lowered.compile(), mesh


def test_every_reader_of_a_program_reads_the_same_parse_and_leaves_it_as_parsed():
    lowered, compiled, mesh = _program()
    text = compiled.as_text()
    shared = parse_module(text)

    census = hlo_census(text, (N,), ("i",))
    flops = program_flops(text)
    steps = timeline(text)
    cost = cost_of(lowered, compiled, mesh)

    assert parse_module(text.encode().decode()) is shared, "the same text parsed twice"
    assert shared == parse_module.__wrapped__(text), "a reader changed the parse the others share"
    assert census.counts["collective-permute"] == N - 1
    assert flops == cost.flops == (N - 1) * 2 * 4 * 16 * 8
    assert steps is not None


def test_the_loop_body_runs_its_trip_count_and_every_fusion_in_it_is_reached():
    _, compiled, _ = _program()
    module = parse_module(compiled.as_text())
    instructions = [ins for body in module.computations.values() for ins in body]
    (loop,) = [ins for ins in instructions if ins.op == "while"]
    ((body, trips),) = callees(loop)
    outer = module.computations[module.entry] + module.computations[body]
    fused = {name for ins in outer for name in re.findall(r"\bcalls=%?([\w.\-]+)", ins.attrs)}

    times = multiplicities(module.computations, module.entry)

    assert trips == times[body] == N - 1
    assert fused and fused <= set(times), "a computation the entry or the loop calls was never reached"
