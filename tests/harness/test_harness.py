"""The harness is ready for the next assignments: several inputs, given in/out specs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autograder.core.tasks import FEATURES, STACKED, Bound, Bounds, Case, Input, Layout, Step, Task
from autograder.core.tolerance import Tolerance
from autograder.harness import shard_map as harness
from autograder.harness import sharded_step as step_harness
from autograder.mesh import MeshSpec
from autograder.trusted.inputs import make_inputs
from autograder.trusted.judges import score_task
from autograder.trusted.measure import compare_python, compare_values, execute, host_value
from autograder.trusted.shard_map import artifact_problems
from autograder.trusted.sharded_step import measure_outputs

# A row-sharded matmul: x split by rows over 'x', w replicated, output split like x.
MATMUL = Task(
    name="matmul",
    grade_id="test_matmul",
    kind="shard_map",
    points={"values": 1.0},
    cases=(Case("2x4:x,y", "x", ((4, 8), (8, 3)), "float32"),),
    inputs=(Input(Layout(("AXIS", None))), Input(Layout((None, None)))),
    out_layout=Layout(("AXIS", None)),
    tolerance={"float32": (1e-5, 1e-5)},
)


def test_layouts_resolve_against_the_mesh():
    mesh = MeshSpec.parse("2x4:x,y")
    assert STACKED.spec(mesh, "y") == (("x", "y"),)
    assert STACKED.global_shape((3, 5), mesh, "y") == (24, 5)
    assert FEATURES.spec(mesh, "y") == (("x",), "y")
    assert FEATURES.global_shape((3, 5), mesh, "y") == (6, 20)
    assert FEATURES.spec(MeshSpec.parse("8:i"), "i") == (None, "i")


def test_two_inputs_with_given_specs_export_and_measure():
    sig = harness.signature(MATMUL, MATMUL.cases[0])
    assert [i["shape"] for i in sig["inputs"]] == [[8, 8], [8, 3]]
    assert sig["out_spec"] == ["x", None]

    def matmul(x, w, axis_name):
        return x @ w

    exported = jax.export.deserialize(bytearray(harness.export(matmul, sig)))
    mesh = MeshSpec.parse(sig["mesh"]).build()
    assert artifact_problems(exported, sig, mesh) == []
    args = make_inputs(sig, seed=0, mesh=mesh)
    out, structure = execute(jax.jit(exported.call), args, mesh)
    assert structure["out_spec"] == ["x"]
    assert structure["census"]["values_per_device"] == 0
    expected = np.asarray(args[0]) @ np.asarray(args[1])
    assert compare_values(out, expected, "float32", (1e-5, 1e-5), mesh) == {"ok": True, "message": ""}
    wrong = expected.copy()
    wrong[5] += 1  # a row held by the devices at x=1
    verdict = compare_values(out, wrong, "float32", (1e-5, 1e-5), mesh)
    assert not verdict["ok"]
    assert "wrong values on 4 of 8 devices" in verdict["message"] and "x=1, y=0" in verdict["message"]
    assert host_value(out)[1] == "float32"


def test_atol_as_a_share_of_the_largest_value_is_read_from_the_whole_expected_array():
    """0.02 of a largest value of 100, held by device 0, lets device 7's small entry be 1.5 off;
    the same gap beside a largest value of 10 fails, and says the room it had."""
    mesh = MeshSpec.parse("8:i").build()
    tolerance = Tolerance(2e-2, 0.0, of_largest=2e-2)
    want = np.zeros((8, 2), np.float32)
    want[0, 0] = 100.0

    def placed(values):
        return jax.device_put(np.asarray(values, np.float32), jax.NamedSharding(mesh, jax.P("i")))

    off = want.copy()
    off[7, 1] = 1.5
    assert compare_values(placed(off), want, "float32", tolerance, mesh)["ok"]
    smaller = want.copy()
    smaller[0, 0] = 10.0
    verdict = compare_values(placed(off - want + smaller), smaller, "float32", tolerance, mesh)
    assert not verdict["ok"]
    assert "atol=0 + 0.02 of the largest |value| = 0.2)" in verdict["message"], verdict["message"]


def test_an_output_that_is_no_array_or_an_empty_one_gets_a_verdict_not_a_crash():
    mesh = MeshSpec.parse("8:i").build()
    out = jax.device_put(np.zeros((8, 3), np.float32), jax.NamedSharding(mesh, jax.P("i")))
    listed = compare_values([out, out], np.zeros((8, 3), np.float32), "float32", (0, 0), mesh)
    assert listed == {"ok": False, "message": "returned a list where one array was expected"}
    empty = jax.device_put(np.zeros((8, 0, 3), np.float32), jax.NamedSharding(mesh, jax.P("i")))
    verdict = compare_values(empty, np.zeros((8, 2, 3), np.float32), "float32", (0, 0), mesh)
    assert not verdict["ok"] and verdict["message"].startswith("output shape is (1, 0, 3) per device")


def test_a_plain_python_answer_in_numpy_is_compared_as_its_json_would_be():
    assert compare_python({"value": np.float64(0.25)}, {"value": 0.25})["ok"]
    assert compare_python({"value": np.array([4, 2])}, {"value": [4, 2]})["ok"]
    assert not compare_python({"value": np.array([4, 3])}, {"value": [4, 2]})["ok"]


# A step on pytrees: w and its momentum split by rows over 'data', then a batch; it returns both.
STEP = Task(
    name="step",
    grade_id="test_step",
    kind="sharded_step",
    points={"values": 1.0, "memory": 1.0},
    bounds={"memory": Bounds(resident=Bound(1.0, "each device keeps its rows of w and of its momentum"))},
    cases=(Case("4:data", shapes=((2, 3), (2, 3), (4, 3))),),
    inputs=(Input(Layout(("data", None))),) * 3,
    step=Step(("params/w", "opt_state/mu/w", "batch/x"), ("params", "opt_state")),
)


def _reference(fn, sig):
    """``fn``'s reference record on the case (as ``trusted.sharded_step.reference_record`` keeps
    it) and its outputs."""
    from autograder.trusted.sharded_step import _held

    mesh = MeshSpec.parse(sig["mesh"]).build()
    outs, structure = execute(step_harness.build(fn, sig)[0], make_inputs(sig, 0, mesh), mesh)
    record = {"dtypes": [str(o.dtype) for o in outs], "structure": structure, "memory": _held(sig, outs)}
    return record, [np.asarray(o) for o in outs]


def _sharded(params, opt_state, batch):
    return params, opt_state, jnp.sum(batch["x"])


def test_a_step_is_judged_on_the_shards_it_returns():
    """What a device holds after a step is read from the arrays the step returns: a step that
    hands its momentum back whole holds all of it on every device, whatever it was given."""
    sig = step_harness.signature(STEP, STEP.cases[0])
    assert sig["returns"] == ["params/w", "opt_state/mu/w"]

    def momentum_whole(params, opt_state, batch):
        return params, {"mu": {"w": jax.reshard(opt_state["mu"]["w"], jax.P())}}, jnp.sum(batch["x"])

    record, expected = _reference(_sharded, sig)
    for step, held in ((_sharded, [24, 24]), (momentum_whole, [24, 96])):
        m = measure_outputs(step_harness.build(step, sig)[0], sig, 0, record, expected, (1e-6, 1e-6))
        assert m["values"]["ok"], m["values"]
        assert [(path, mine, whole) for path, mine, whole in m["memory"]] == [
            ("params/w", held[0], 96),
            ("opt_state/mu/w", held[1], 96),
        ]
    results = {r.name: r for r in score_task(STEP, [(STEP.cases[0], m)])}
    assert results["step: memory"].score == 0
    assert "opt_state/mu/w is held whole on every device (96 bytes per device)" in results["step: memory"].message
    assert "the reference keeps 1/4 of it (24 bytes)" in results["step: memory"].message


def test_a_step_is_graded_as_its_own_jit_returns_it_at_the_top_level():
    """Nested in the flat step's jit, a jit's out_shardings set no result's type, and its result
    follows its inputs; so the flat step returns each leaf where the student's step, called at the
    top level, leaves it: her jit's out_shardings decide what each device holds after the step."""
    sig = step_harness.signature(STEP, STEP.cases[0])
    rows = jax.P("data", None)
    whole_momentum = jax.jit(_sharded, out_shardings=(rows, jax.P(), jax.P()))  # mu back on every device

    def in_a_step(params, opt_state, batch):
        params, mu, loss = whole_momentum(params, opt_state["mu"]["w"], batch)
        return params, {"mu": {"w": mu}}, loss

    record, expected = _reference(_sharded, sig)
    m = measure_outputs(step_harness.build(in_a_step, sig)[0], sig, 0, record, expected, (1e-6, 1e-6))
    assert [held for _, held, _ in m["memory"]] == [24, 96]
    elsewhere = jax.jit(_sharded, in_shardings=(jax.P(), jax.P(), jax.P()))  # takes its state whole: not the task's
    with pytest.raises(ValueError, match="the jit of _sharded takes P\\(\\) where the step is given P\\('data'\\)"):
        step_harness.in_sandbox(elsewhere, sig, {})


PEAK = Task(
    name="step",
    grade_id="test_step",
    kind="sharded_step",
    points={"values": 1.0, "peak memory": 1.0},
    bounds={"peak memory": Bounds(peak=Bound(1.1, "donate the state the step replaces"))},
    cases=(Case("4:data", shapes=((64, 32), (64, 32), (8, 32))),),
    inputs=(Input(Layout(("data", None))),) * 3,
    step=Step(("params/w", "opt_state/mu/w", "batch/x"), ("params", "opt_state")),
)


def _momentum(params, opt_state, batch):
    mu = 0.9 * opt_state["mu"]["w"] + jnp.mean(batch["x"]) * params["w"]
    return {"w": params["w"] - 0.1 * mu}, {"mu": {"w": mu}}, jnp.sum(batch["x"])


def test_a_step_that_donates_its_state_is_run_donated_and_needs_less_at_its_peak():
    """The artifact carries the student's ``donate_argnums`` (its arguments' aliasing), the
    trusted side runs it so, and XLA's buffer assignment then writes the new state over the
    old: the same step without donation needs a second copy of the state at its peak."""
    from autograder.trusted.sharded_step import donated_arguments

    sig = step_harness.signature(PEAK, PEAK.cases[0])
    donating = jax.jit(_momentum, donate_argnums=(0, 1))

    def donating_inside(params, opt_state, batch):  # the jit written in the step's body, on part of its state
        return jax.jit(_momentum, donate_argnums=0)(params, opt_state, batch)

    mesh = MeshSpec.parse(sig["mesh"]).build()
    structs = step_harness.build(_momentum, sig)[1]
    with jax.set_mesh(mesh):
        assert step_harness.donated(_momentum, sig, structs) == ()
        assert step_harness.donated(donating, sig, structs) == (0, 1)
        assert step_harness.donated(donating_inside, sig, structs) == (0,)
    record, expected = _reference(donating, sig)
    peaks = {}
    for name, fn in (("donating", donating), ("keeping", jax.jit(_momentum))):
        exported = jax.export.deserialize(bytearray(step_harness.in_sandbox(fn, sig, {})))
        assert donated_arguments(exported) == ((0, 1) if name == "donating" else ())
        call = jax.jit(exported.call, donate_argnums=donated_arguments(exported))
        peaks[name] = measure_outputs(call, sig, 0, record, expected, (1e-6, 1e-6))
        assert peaks[name]["values"]["ok"], peaks[name]["values"]
    state = 2 * 64 * 32 * 4  # w and its momentum: one device's rows of each (the case's shapes are local)
    saved = peaks["keeping"]["signature"]["peak"] - peaks["donating"]["signature"]["peak"]
    assert 0.99 * state <= saved <= state  # the state's copy, less a few bytes of temporaries XLA places apart
    for name, score in (("donating", 1.0), ("keeping", 0.0)):
        results = {r.name: r for r in score_task(PEAK, [(PEAK.cases[0], peaks[name])])}
        assert results["step: peak memory"].score == score, results["step: peak memory"].message
    assert "donate the state the step replaces" in results["step: peak memory"].message
