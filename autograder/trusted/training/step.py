"""The train_step kind, trusted half: a step judged from its exported program, run here on
inputs the sandbox never saw: its new state and loss against the reference step's; the
collectives in its compiled HLO (one all-reduce that carries every gradient once, nothing
gathered); and whether its devices draw different dropout masks. That last one is measured, not
read from the code: swap the examples of device 0 and device d and run the step again. When the
gradients are averaged the update is a symmetric sum over devices, so with one mask for all it
cannot change; with a mask per device it does. Collectives and dropout are judged only on steps
that are right whenever dropout plays no part (the task's ``quiet`` state), so no points come
without a working step, while a step whose only fault is its dropout keys still earns its
collectives; and dropout only on a step whose collectives are a data-parallel step's, so a step
that gathers the batch and computes it whole keeps its values alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ...core.hlo import hlo_census, stablehlo_collectives
from ...core.mesh import MeshSpec
from ...core.quick_compile import compiler_options
from ...core.records import Census, Measurement, StepMeasurement, StepSig, TestResult, fail, ok
from ...core.tasks import Task, Training
from ...harness import layouts
from ...harness.train_step import flat_step
from .. import policy, reference
from ..jobs import Evaluation, Measured, ReferenceJob, References
from ..verdict import part_result
from .records import TOLERANCE

SAME_MASK = 1e-5  # relative change of the update below which two devices share a dropout mask


def reference_record(job: ReferenceJob, refs: References) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    import jax

    sig = cast(StepSig, job["sig"])  # this module is handed only its own kind
    inputs = StepInputs(layouts.given_for(sig), sig["mesh"], job["seed"])
    step = jax.jit(
        flat_step(refs.lookup(sig["function"]), inputs.treedef), compiler_options=compiler_options(inputs.mesh)
    )
    outputs, probe = inputs.expected(step)
    arrays = {**{f"out{i}": v for i, v in enumerate(outputs)}, **{f"probe{i}": v for i, v in enumerate(probe)}}
    return {"paths": inputs.paths}, arrays


class StepInputs:
    """The inputs a step is judged on, made here from the case's seed: the given state, a batch
    of random examples and a key; and the task's quiet state, in which dropout plays no part."""

    def __init__(self, given: Training, mesh: str, seed: int) -> None:
        import jax

        self.given = given
        self.mesh = MeshSpec.parse(mesh).build()
        state = given.init_state(seed)
        leaves, self.treedef = jax.tree.flatten(state)
        self.paths = list(layouts.flatten(state))
        self.state = [np.asarray(leaf) for leaf in leaves]
        self.probe_state = [
            np.full_like(leaf, given.quiet[path]) if path in given.quiet else leaf
            for path, leaf in zip(self.paths, self.state)
        ]
        rng = np.random.default_rng(seed)
        self.batch = given.random_batch(rng)
        self.key_seed = int(rng.integers(2**31))

    def args(self, leaves: list[np.ndarray], batch: dict[str, np.ndarray]) -> tuple[Any, ...]:
        import jax

        everywhere = jax.NamedSharding(self.mesh, jax.P())
        by_example = jax.NamedSharding(self.mesh, jax.P(self.given.batch_axis))
        return (
            [jax.device_put(leaf, everywhere) for leaf in leaves],
            {name: jax.device_put(v, by_example) for name, v in batch.items()},
            jax.device_put(jax.random.key(self.key_seed), everywhere),
        )

    def run(
        self, call: Callable[..., Any], leaves: list[np.ndarray], batch: dict[str, np.ndarray] | None = None
    ) -> list[np.ndarray]:
        """The new state's leaves and the loss, as NumPy."""
        import jax

        with jax.set_mesh(self.mesh):
            new_leaves, loss = call(*self.args(leaves, batch or self.batch))
        return [np.asarray(v) for v in (*new_leaves, loss)]

    def expected(self, call: Callable[..., Any]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """A reference step's outputs on the state, and on the state with its hidden units off."""
        return self.run(call, self.state), self.run(call, self.probe_state)

    def census(self, call: Any) -> Census:  # call: a jitted function (it has .lower)
        """Collectives the program asks for, and those its compiled HLO runs."""
        import jax

        with jax.set_mesh(self.mesh):
            lowered = call.lower(*self.args(self.state, self.batch))
            compiled = lowered.compile()
        return {"asked": dict(stablehlo_collectives(lowered.as_text())), **hlo_census(compiled.as_text()).to_json()}

    def swapped(self, device: int) -> dict[str, np.ndarray]:
        """The batch with the examples of device 0 and ``device`` exchanged."""
        rows = len(self.batch["x"]) // self.mesh.size
        order = np.arange(len(self.batch["x"]))
        a, b = order[:rows].copy(), order[device * rows : (device + 1) * rows].copy()
        order[:rows], order[device * rows : (device + 1) * rows] = b, a
        return {name: v[order] for name, v in self.batch.items()}


def measure_step(
    call: Callable[..., Any], inputs: StepInputs, expected: list[np.ndarray], expected_probe: list[np.ndarray]
) -> StepMeasurement:
    """Values, values when dropout plays no part, collectives and per-device masks of a step."""
    try:
        got = inputs.run(call, inputs.state)
        probe = inputs.run(call, inputs.probe_state)
        census = inputs.census(call)
    except Exception as err:  # the student's program failed at run time
        said = f": {str(err)[:300]}" if str(err) else ""
        return {"values": fail(f"failed to run: {type(err).__name__}{said}")}
    problem = _leaves_problem(got, expected, inputs.state, inputs.paths, inputs.given.params_prefix)
    dropout_free = _leaves_problem(probe, expected_probe, inputs.probe_state, inputs.paths, inputs.given.params_prefix)
    if problem and not dropout_free:
        problem += ", yet the step is right when dropout plays no part: look at the dropout keys"
    return {
        "values": fail(problem) if problem else ok(),
        "dropout_free": fail(dropout_free) if dropout_free else ok(),
        "census": census,
        "devices": inputs.mesh.size,
        "num_params": sum(
            leaf.size for path, leaf in zip(inputs.paths, inputs.state) if path.startswith(inputs.given.params_prefix)
        ),
        "same_masks": _devices_sharing_masks(call, inputs, got),
    }


def _devices_sharing_masks(call: Callable[..., Any], inputs: StepInputs, got: list[np.ndarray]) -> list[int]:
    """Devices d whose examples, swapped with device 0's, leave the update unchanged."""
    before = np.concatenate([v.ravel() for v in inputs.state])
    update = np.concatenate([v.ravel() for v in got[:-1]]) - before
    scale = float(np.abs(update).max()) or 1.0
    same = []
    for device in range(1, inputs.mesh.size):
        other = inputs.run(call, inputs.state, inputs.swapped(device))
        change = np.abs(np.concatenate([v.ravel() for v in other[:-1]]) - before - update).max()
        if change <= SAME_MASK * scale:
            same.append(device)
    return same


def _leaves_problem(
    got: list[np.ndarray], expected: list[np.ndarray], before: list[np.ndarray], paths: list[str], params: str
) -> str:
    """The first output that differs, parameters first; and, when every parameter moved by the
    same multiple of the reference's update, that multiple."""
    names = [*paths, "loss"]
    if len(got) != len(expected):
        return f"the step returned {len(got) - 1} state arrays and a loss; the state has {len(expected) - 1}"
    order = sorted(range(len(names)), key=lambda i: (not names[i].startswith(params), names[i] == "loss"))
    for i in order:
        g, e = got[i], expected[i]
        if g.shape != e.shape:
            return f"{names[i]} has shape {g.shape}, expected {e.shape}"
        if not np.allclose(g, e, rtol=TOLERANCE[0], atol=TOLERANCE[1], equal_nan=True):
            worst = float(np.nanmax(np.abs(np.asarray(g, np.float64) - e)))
            return f"after one step, {names[i]} differs from the reference's by up to {worst:.3g}{_ratio(got, expected, before, paths, params)}"
    return ""


def _ratio(
    got: list[np.ndarray], expected: list[np.ndarray], before: list[np.ndarray], paths: list[str], prefix: str
) -> str:
    params = [i for i, path in enumerate(paths) if path.startswith(prefix)]
    mine = np.concatenate([(got[i] - before[i]).ravel() for i in params])
    theirs = np.concatenate([(expected[i] - before[i]).ravel() for i in params])
    size = float(theirs @ theirs)
    if size == 0:
        return ""
    k = float(mine @ theirs) / size  # the multiple that fits best, and how well it fits
    if abs(k - 1) > 0.1 and np.linalg.norm(mine - k * theirs) <= 1e-3 * np.linalg.norm(mine):
        return (
            f"; every parameter moved {k:.3g} times as far as the reference's: are the gradients summed, not averaged?"
        )
    return ""


def measure(test: Evaluation) -> Measurement:
    """An exported step: refused unless it is a pure array program for the task's mesh and
    state, else measured like any step."""
    import jax

    if test.get("failure"):
        return {"values": fail(test["failure"])}
    sig = cast(StepSig, test["sig"])  # this module is handed only its own kind
    inputs = StepInputs(layouts.given_for(sig), sig["mesh"], test["seed"])
    try:
        exported = policy.load(test["artifact"])
    except policy.Refused as err:
        return policy.refused(str(err))
    problems = policy.program_problems(exported, inputs.mesh)
    want = [(tuple(leaf.shape), str(leaf.dtype)) for leaf in inputs.state]
    got = [(tuple(a.shape), str(a.dtype)) for a in exported.in_avals][: len(want)]
    if got != want or len(exported.in_avals) != len(want) + 3:
        problems.append("its inputs are not the given state, a batch and a key")
    if problems:
        return policy.refused("; ".join(problems))
    _, saved = reference.load(test["reference"])
    n = len(inputs.state) + 1
    expected = [saved[f"out{i}"] for i in range(n)]
    expected_probe = [saved[f"probe{i}"] for i in range(n)]
    return measure_step(
        jax.jit(exported.call, compiler_options=compiler_options(inputs.mesh)), inputs, expected, expected_probe
    )


def score(task: Task, measured: Measured) -> list[TestResult]:
    """Values, then collectives and dropout, each judged on every case."""
    steps = [cast(StepMeasurement, m) for _, m in measured]  # this module is handed only its own kind
    parts = {part: _step_problem(part, steps) for part in task.points}
    return [part_result(task, part, problem, "visible") for part, problem in parts.items()]


def _step_problem(part: str, measurements: list[StepMeasurement]) -> str:
    for m in measurements:
        if part == "values" and not m["values"]["ok"]:
            return m["values"]["message"]
        if part == "values":
            continue
        if "dropout_free" not in m or not m["dropout_free"]["ok"]:
            why = m.get("dropout_free", m["values"])["message"]
            return f"not checked until the step is right when dropout plays no part ({why})"
        if part == "dropout" and _collectives_problem(m):  # per-device masks mean something in a DP step only
            return "not checked until the collectives are right (see the collectives part)"
        problem = _collectives_problem(m) if part == "collectives" else _dropout_problem(m)
        if problem:
            return problem
    return ""


def _collectives_problem(m: StepMeasurement) -> str:
    census, n, devices = m["census"], m["num_params"], m["devices"]
    ops = {op for op, k in {**census["asked"], **census["counts"]}.items() if k and op != "all-reduce"}
    if ops:
        return (
            f"the program uses {', '.join(sorted(ops))}; averaging gradients needs only an "
            "all-reduce (psum or pmean over 'data'), and no gathered parameters"
        )
    reduces = census["counts"].get("all-reduce", 0)
    if reduces > 1:
        return (
            f"the compiled step runs {reduces} all-reduces where one would do: average the gradients and the "
            "loss in one place (pmean of the tuple (grads, loss)), so that XLA's all-reduce combiner can merge them"
        )
    per_value = 2 * (devices - 1) / devices  # what an all-reduce sends per device, per value
    sent = census["values_per_device"] or 0.0
    if sent < per_value * n - 1e-6:
        return f"the all-reduce carries {sent:g} values per device; averaging all {n} gradients sends at least {per_value * n:g}"
    if sent > per_value * (n + 1) + 1e-6:
        return f"sends {sent:g} values per device; one all-reduce of the {n} gradients and the loss sends {per_value * (n + 1):g}"
    return ""


def _dropout_problem(m: StepMeasurement) -> str:
    same = m["same_masks"]
    if not same:
        return ""
    devices = ", ".join(map(str, same))
    return (
        f"device 0 and device{'s' if len(same) > 1 else ''} {devices} draw the same dropout mask: swapping "
        "their examples leaves the update unchanged; fold the device's index along 'data' into the key"
    )
