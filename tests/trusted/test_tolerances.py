"""Each part's bfloat16 tolerance is one a legitimate bfloat16 program meets on any JAX: at least
``MULTIPLE`` times the reference's own error against a float32 evaluation of the same inputs, on
every bfloat16 case (visible and hidden), on the seeds it is judged on and a few others; a sum of
the partials taken in another order, by the reference or by its independent stand-in, passes the
grader's own comparison; and every known-wrong program whose values are wrong still fails there."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from autograder.specs import get
from autograder.trusted.measure import compare_values, host_value

from ..helpers import bfloat16
from ..helpers.bfloat16 import MULTIPLE, oracle, reference, run, seeds, tolerance_used, values
from ..helpers.submissions import submitted, wrong_submissions

PARTS = bfloat16.bf16_parts()
IDS = [f"{a}/{t.name}" for a, t, _ in PARTS]
# Programs that add in another order than the reference's: the reference with its all-reduces and
# reduce-scatters summed one partial at a time in reverse device order, and its stand-in (JAX's own
# collectives or sharding, ``tests/oracles/``) as written and summed that way.
OTHER_ORDERS = (("the reference", "reverse"), ("its stand-in", None), ("its stand-in", "reverse"))


def _judged(assignment, task, cases, others=False):
    """Each bfloat16 case with each seed it is judged on (and a few others), and the reference's
    result there."""
    for case in cases:
        for seed in seeds(assignment, task, case, others):
            yield case, seed, run(reference(assignment, task.name), task, case, seed)


@pytest.mark.parametrize("assignment, task, cases", PARTS, ids=IDS)
def test_the_tolerance_is_the_stated_multiple_of_the_references_own_error(assignment, task, cases):
    tolerance = task.tolerance_for("bfloat16")
    for case, seed, out in _judged(assignment, task, cases, others=True):
        exact = values(run(reference(assignment, task.name), task, case, seed, "float32"))
        used = tolerance_used(exact, values(out), tolerance)
        assert used <= 1 / MULTIPLE, (
            f"{case.mesh}, differentiated={case.differentiate}, seed {seed}: the reference's own bfloat16 error "
            f"against float32 uses {used:.3g} of the tolerance {tolerance}; it must use at most 1/{MULTIPLE}: "
            "widen the spec's bfloat16 tolerance to what benchmarks/bf16_tolerances.py prints (docs/instructor.md)"
        )


@pytest.mark.parametrize("assignment, task, cases", PARTS, ids=IDS)
def test_a_sum_in_another_order_passes_the_graders_comparison(assignment, task, cases):
    tolerance = task.tolerance_for("bfloat16")
    programs = {"the reference": reference(assignment, task.name), "its stand-in": oracle(assignment, task.name)}
    for case, seed, out in _judged(assignment, task, cases):
        expected = host_value(out)[0].astype(np.float32)  # as the reference's record keeps it
        for name, order in OTHER_ORDERS:
            got = run(programs[name], task, case, seed, order=order)
            verdict = compare_values(got, expected, "bfloat16", tolerance, case.mesh_spec.build())
            assert verdict["ok"], (case.mesh, case.differentiate, seed, name, order, verdict["message"])


def _value_wrong() -> list[tuple[str, str, str]]:
    """Known-wrong submissions that lose a bfloat16 part's hidden values for wrong values (not a
    time limit, a raise or a dtype), with that part."""
    parts = {(a, t.name) for a, t, _ in PARTS}
    return [
        (a, wrong.name, task)
        for a in sorted({a for a, _ in parts})
        for wrong in wrong_submissions(a)
        for task in wrong.functions
        if (a, task) in parts
        and f"{task}: hidden values" in wrong.expected
        and any(
            w in wrong.reasons.get(f"{task}: {p}", "")
            for p in ("values", "hidden values")
            for w in ("wrong values", "differ")
        )
    ]


@pytest.mark.parametrize("assignment, wrong, function", _value_wrong(), ids=lambda x: x)
def test_a_program_with_wrong_values_still_fails_on_a_bfloat16_case(assignment, wrong, function):
    task = get(assignment).task(function)
    cases = next(c for a, t, c in PARTS if (a, t.name) == (assignment, function))
    fn = submitted(assignment, wrong, function)
    verdicts = [
        compare_values(
            run(fn, task, case, seed),
            host_value(out)[0].astype(np.float32),
            "bfloat16",
            task.tolerance_for("bfloat16"),
            case.mesh_spec.build(),
        )
        for case, seed, out in _judged(assignment, task, cases)
    ]
    assert not all(v["ok"] for v in verdicts), f"{wrong} passes every bfloat16 case of {function}"


def test_a_reordered_sum_rounds_at_each_step():
    """The reordered sums are another order indeed: 1 and seven 2^-8 add to 1 one at a time
    (each 2^-8 is half a step of bfloat16 at 1, and rounds away), to 1 + 2^-5 in the other order
    and in XLA's all-reduce (float32, then one rounding)."""
    import jax
    import jax.numpy as jnp

    mesh = jax.make_mesh((8,), ("i",), axis_types=(jax.sharding.AxisType.Explicit,))
    x = jax.device_put(jnp.array([1.0] + [2**-8] * 7, jnp.bfloat16)[:, None], jax.NamedSharding(mesh, jax.P("i")))

    def total(order):
        def summed(v):
            return jax.lax.psum(v, "i")

        with bfloat16.reordered(order) if order else contextlib.nullcontext():
            out = jax.jit(jax.shard_map(summed, mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P()))(x)
        return float(out[0, 0])

    assert (total("forward"), total("reverse"), total(None)) == (1.0, 1 + 2**-5, 1 + 2**-5)
