"""The bfloat16 cases of the graded parts, run as the grader runs them, in float32 on the same
inputs, and with their sums taken in another order: what a part's bfloat16 tolerance is derived
from (how much of it the reference's own rounding uses) and checked against (a legitimate
program that adds in another order must still pass)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from autograder.core.course import Course
from autograder.core.tasks import Case, Task, case_seed
from autograder.core.tolerance import Tolerance
from autograder.harness import shard_map as harness
from autograder.specs import ASSIGNMENTS, get
from autograder.trusted.inputs import make_inputs
from autograder.trusted.measure import execute, host_value

from .course import REPO

CHECKOUT = Course(REPO)
# A part's bfloat16 tolerance is at least this many times the reference's own error against a
# float32 evaluation of the same inputs. Why 4: XLA's all-reduce on the CPU adds in float32 and
# rounds once, so the reference errs by up to half a step of bfloat16 at the result's size; a
# program that adds N partials one at a time in bfloat16, as a ring does, rounds N - 1 times, up to
# N - 1 half steps at the partial sums' size; the two may err in opposite directions, N half steps
# apart. The bfloat16 cases sum over at most 4 devices (ring attention's 8 blocks aside, whose
# error uses 3% of its tolerance). An inexact part's rtol stays 2e-2 (5 steps of bfloat16's 2^-8
# relative to the value); its atol is derived. Measured (benchmarks/bf16_tolerances.py): such
# reordered sums of the references use at most 0.27 of the tolerances.
MULTIPLE = 4
OTHER_SEEDS = (0, 1, 2, 3)
ORDERS = ("forward", "reverse")  # the device orders a reordered sum adds its partials in, one at a time


def bf16_parts() -> list[tuple[str, Task, tuple[Case, ...]]]:
    """Each array part with a bfloat16 case, visible or hidden, and those cases."""
    parts = []
    for name in sorted(ASSIGNMENTS):
        assignment = get(name)
        for task in assignment.tasks:
            if task.kind != "shard_map":
                continue
            # marked hidden as the grader marks them: a case's seed follows from all of it
            cases = task.with_hidden(CHECKOUT.hidden_cases(assignment, task.name)).cases
            bf16 = tuple(c for c in cases if c.dtype == "bfloat16")
            if bf16:
                parts.append((name, task, bf16))
    return parts


def reference(assignment: str, task: str) -> Callable[..., Any]:
    return CHECKOUT.reference(get(assignment), task)


def oracle(assignment: str, task: str) -> Callable[..., Any]:
    """The part's independent stand-in (``tests/oracles/``): the same values by another program."""
    module = importlib.import_module(f"tests.oracles.{get(assignment).solutions}")
    found: Callable[..., Any] = module.ORACLES[task]
    return found


def seeds(assignment: str, task: Task, case: Case, others: bool = False) -> tuple[int, ...]:
    """The seeds a case is judged on (a student's own check's, and the grader's, salted with the
    course's secret); ``others``: a few more, since another course's secret draws other inputs."""
    judged = case_seed(assignment, task.name, case), case_seed(assignment, task.name, case, CHECKOUT.salt())
    return judged + (OTHER_SEEDS if others else ())


def run(
    fn: Callable[..., Any], task: Task, case: Case, seed: int, dtype: str = "bfloat16", order: str | None = None
) -> Any:
    """``fn`` on ``case``'s inputs for ``seed`` (drawn in bfloat16, as the grader draws them),
    wrapped as the grader wraps it; ``dtype="float32"``: those same values upcast, and the
    program traced for float32; ``order``: every ``psum`` and ``psum_scatter`` it calls added up
    one partial at a time in bfloat16, in that device order. Returns the output array."""
    import jax.numpy as jnp

    sig = harness.signature(task, case)
    mesh = case.mesh_spec.build()
    args = make_inputs(sig, seed, mesh)
    if dtype != "bfloat16":
        sig = {**sig, "inputs": [{**i, "dtype": dtype} if i["dtype"] == "bfloat16" else i for i in sig["inputs"]]}
        args = [a.astype(jnp.dtype(dtype)) if a.dtype == jnp.bfloat16 else a for a in args]
    program = _program(fn, json.dumps(sig), order)
    with reordered(order) if order else contextlib.nullcontext():
        out, _ = execute(program, args, mesh)
    return out


@functools.cache
def _program(fn: Callable[..., Any], sig: str, order: str | None) -> Any:
    """One jitted program per function, signature and order: the seeds of a case share its compile."""
    del order  # part of the key only: the order is traced in when the program first runs
    wrapped, _, _ = harness.build(fn, json.loads(sig))
    return wrapped


def values(out: Any) -> np.ndarray:
    return np.asarray(host_value(out)[0], np.float64)


def tolerance_used(got: np.ndarray, want: np.ndarray, tolerance: Tolerance) -> float:
    """How much of ``tolerance`` the difference uses, in the comparator's own terms (NumPy's
    ``isclose``, with the reference as ``want``): the largest ``|got - want| / (atol + rtol |want|)``,
    atol widened by the case's largest value where the tolerance says so. At most 1 passes; at most
    1/k passes with k times less tolerance."""
    gap = np.abs(got - want)
    with np.errstate(divide="ignore", invalid="ignore"):  # any gap at all, past a zero tolerance: inf
        used = np.where(gap == 0, 0.0, gap / (tolerance.atol_for(want) + tolerance.rtol * np.abs(want)))
    return float(np.max(used, initial=0.0))


def needed_atol(got: np.ndarray, want: np.ndarray, rtol: float, multiple: float = 1) -> float:
    """The least atol beside ``rtol`` at which ``multiple`` times the gap between ``got`` and
    ``want`` still passes the comparator."""
    return float(np.max(multiple * np.abs(got - want) - rtol * np.abs(want), initial=0.0))


def needed_share(got: np.ndarray, want: np.ndarray, rtol: float, multiple: float = 1) -> float:
    """The least share of the case's largest |value| that, as atol beside ``rtol``, lets
    ``multiple`` times the gap pass (``Tolerance.of_largest``)."""
    largest = float(np.max(np.abs(want), initial=0.0))
    return needed_atol(got, want, rtol, multiple) / largest if largest else 0.0


@contextlib.contextmanager
def reordered(order: str) -> Iterator[None]:
    """``jax.lax.psum`` and ``jax.lax.psum_scatter`` as a program that adds the devices' partials
    one at a time, each addition rounded to the partials' dtype, in the given device order:
    what a ring does, where XLA's collectives on the CPU add in float32 and round once."""
    import jax

    psum, psum_scatter = jax.lax.psum, jax.lax.psum_scatter

    def in_order(gathered: Any) -> Any:
        n = gathered.shape[0]
        picks = range(n) if order == "forward" else range(n - 1, -1, -1)
        total = None
        for i in picks:
            total = gathered[i] if total is None else total + gathered[i]
        return total

    def summed(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
        def one(v: Any) -> Any:
            if axis_index_groups is not None or not _reorderable(v):
                return psum(v, axis_name, axis_index_groups=axis_index_groups)
            return in_order(jax.lax.all_gather(v, axis_name, to="invarying"))

        return jax.tree.map(one, x)

    def scattered(
        x: Any, axis_name: Any, *, scatter_dimension: int = 0, axis_index_groups: Any = None, tiled: bool = False
    ) -> Any:
        if axis_index_groups is not None or not isinstance(axis_name, str) or not _reorderable(x):
            return psum_scatter(
                x, axis_name, scatter_dimension=scatter_dimension, axis_index_groups=axis_index_groups, tiled=tiled
            )
        total, me = in_order(jax.lax.all_gather(x, axis_name)), jax.lax.axis_index(axis_name)
        if not tiled:
            return jax.lax.dynamic_index_in_dim(total, me, scatter_dimension, keepdims=False)
        size = x.shape[scatter_dimension] // jax.lax.axis_size(axis_name)
        return jax.lax.dynamic_slice_in_dim(total, me * size, size, scatter_dimension)

    jax.lax.psum, jax.lax.psum_scatter = summed, scattered
    try:
        yield
    finally:
        jax.lax.psum, jax.lax.psum_scatter = psum, psum_scatter


def _reorderable(v: Any) -> bool:
    """A floating array: integers add exactly in any order, and a Python number is no partial."""
    import jax.numpy as jnp

    return hasattr(v, "dtype") and jnp.issubdtype(v.dtype, jnp.floating)
