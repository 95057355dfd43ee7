"""02_sharded_matmul's engine pieces: the instructor's closed forms, bytes at the program's dtypes,
the verdict on a ring's bytes against the reference's, and the message for an output that is not
the sharding asked for."""

from __future__ import annotations

from dataclasses import replace

import jax
import jax.numpy as jnp
import pytest

from autograder.core.hlo import hlo_census, program_bytes, stablehlo_itemsizes
from autograder.harness import shard_map as harness
from autograder.specs import get
from autograder.specs.sharded_matmul import PLANS
from autograder.trusted.measure import compare_python
from solutions.sharded_matmul import TARGETS, comm_bytes

from ..helpers import verdicts

SPEC = get("02_sharded_matmul")
RING = SPEC.task("collective_matmul_allgather")
CASE_8, CASE_24, CASE_2 = RING.cases


def test_cases_are_the_global_sizes_split_by_each_layout():
    # 8:i: A 32 x 16 with rows split, B 16 x 8 with columns split.
    assert CASE_8.shapes == ((4, 16), (16, 1))
    assert SPEC.task("matmul_case2").cases[0].shapes == ((32, 2), (16, 8))
    # 2x4:x,y over y (4 devices): A 16 x 8, B 8 x 12.
    assert SPEC.task("matmul_case3").cases[1].shapes == ((16, 2), (2, 12))


def test_closed_forms_per_strategy():
    # A 32 x 16, B 16 x 8, C 32 x 8 on 8 devices, float32.
    got = {s: comm_bytes(s, 32, 16, 8, 8, 4) for s in PLANS}
    assert got == {
        "matmul_allgather": 7 / 8 * 512 * 4,
        "matmul_allreduce": 2 * 7 / 8 * 256 * 4,
        "matmul_gather_both": 7 / 8 * (512 + 128) * 4,
        "matmul_reduce_scatter": 7 / 8 * 256 * 4,
        "matmul_reshard": 7 / 8 * 128 * 4,
        "collective_matmul_allgather": 7 / 8 * 512 * 4,
        "collective_matmul_reduce_scatter": 7 / 8 * 256 * 4,
    }
    ring = TARGETS[RING.name]
    assert ring.on(CASE_8) == {"comm_bytes": 1792}
    assert ring.on(replace(CASE_8, dtype="bfloat16"))["comm_bytes"] == 896


def test_plain_python_numbers_agree_up_to_rounding():
    assert compare_python({"value": 2 / 3 * 24}, {"value": 16})["ok"]
    assert not compare_python({"value": 16.5}, {"value": 16})["ok"]


def _m(sent, wire=None, reference=1792, permutes=7, axis="i"):
    """A right ring on one axis that sends ``sent`` bytes at the program's dtype (``wire`` on this
    backend's wire), beside a reference that sends ``reference``."""
    census = {
        "counts": {"collective-permute": permutes},
        "values_per_device": sent / 4,
        "bytes_per_device": wire or sent,
        "program_bytes": sent,
        "unbounded": [],
        "farthest_hops": 1,
    }
    signature = {"flops": 1024.0, "peak": 2000, "traffic": {axis: float(sent)}, "resident": 128}
    # A ring whose matmul of step s waits for the s blocks that have arrived: it overlaps.
    return {
        "values": {"ok": True, "message": ""},
        "asked": census["counts"],
        "census": census,
        "matmul_waits": list(range(permutes + 1)),
        "signature": signature,
        "reference_census": {**census, "program_bytes": reference},
        "reference_signature": {**signature, "traffic": {axis: float(reference)}},
    }


def _scores(measured):
    return verdicts.scores("02_sharded_matmul", RING, measured)


def test_bytes_are_held_to_the_reference_and_the_least_is_shown():
    ok = _scores([(CASE_8, _m(1792)), (CASE_24, _m(384, reference=384, permutes=3, axis="y"))])
    assert ok["communication"][0] == RING.points["communication"]
    over = _scores([(CASE_8, _m(2048)), (CASE_24, _m(384, reference=384, permutes=3, axis="y"))])
    assert over["technique"][0] == RING.points["technique"]  # 8/7 of a ring's bytes is still a ring
    assert over["communication"] == (
        0,
        "mesh 8:i, axis 'i', float32, (4, 16) (16, 1) per device: sends 1.14x "
        "the reference's bytes per device over 'i' (2,048 against 1,792 on the same "
        "mesh; at most 1x); the least it can send is 1792 bytes: a ring passes one "
        "block on at each of its N - 1 steps, as much as the collective it replaces",
    )


def test_a_widened_wire_is_reported_beside_the_program_bytes():
    case = replace(CASE_8, dtype="bfloat16")
    scores = _scores([(case, _m(1024, wire=2048, reference=896))])
    assert (
        "(1,024 against 896 on the same mesh; at most 1x; this backend's wire carries 2,048"
        in (scores["communication"][1])
    )


def _lowered_and_compiled(fn, dtype):
    task = SPEC.task("matmul_reduce_scatter")
    sig = harness.signature(task, replace(task.cases[0], dtype=dtype))
    wrapped, structs, mesh = harness.build(fn, sig)
    with jax.set_mesh(mesh):
        lowered = wrapped.lower(*structs)
        return lowered.as_text(), lowered.compile().as_text()


@pytest.mark.parametrize("upcast", [False, True])
def test_bytes_follow_the_dtype_the_program_asks_for_not_the_wire(upcast):
    """XLA:CPU sends bfloat16 as float32; the program's own dtype decides the bytes judged."""

    def rs(a, b, axis_name):
        c = (a @ b).astype(jnp.float32) if upcast else a @ b
        return jax.lax.psum_scatter(c, axis_name, scatter_dimension=0, tiled=True).astype(a.dtype)

    asked, compiled = _lowered_and_compiled(rs, "bfloat16")
    census = hlo_census(compiled)
    assert stablehlo_itemsizes(asked) == {"reduce-scatter": 4 if upcast else 2}
    assert census.values_per_device == 7 / 8 * 32 * 8 and census.bytes_per_device == 4 * census.values_per_device
    assert program_bytes(census, stablehlo_itemsizes(asked)) == (4 if upcast else 2) * census.values_per_device


def test_a_varying_result_where_the_task_asks_for_a_replicated_one_is_named():
    task = SPEC.task("matmul_case2")
    sig = harness.signature(task, task.cases[1])

    def matmul_case2(a, b, axis_name):
        return jax.lax.all_gather(a, axis_name, axis=1, tiled=True) @ b

    with pytest.raises(harness.OutputShardingError) as err:
        harness.export(matmul_case2, sig)
    assert str(err.value).startswith(
        "the task's output sharding is P(), so matmul_case2's result must be the same on every device "
        "along 'y'; the value returned varies along 'y' (its type is float32[16,12]{V:y})"
    )
