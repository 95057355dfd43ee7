"""The trusted side compiles with ``QUICK_CPU`` to save time: a program compiled so must show a
census the same as JAX's default compile does, and the same values, or the saving would change
grades. Checked on every array case of every assignment, the reference's program each time."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from autograder.core.quick_compile import QUICK_CPU, compiler_options, xla_flags
from autograder.grading.grader import grader_for
from autograder.harness import shard_map, sharded_step
from autograder.mesh import MeshSpec
from autograder.trusted import measure
from autograder.trusted.inputs import make_inputs

from ..helpers.course import ASSIGNMENTS

HARNESS = {"shard_map": shard_map, "sharded_step": sharded_step}


def _measured(fn, sig, seed):
    wrapped, _, mesh = HARNESS[sig["kind"]].build(fn, sig)
    out, structure = measure.execute(wrapped, make_inputs(sig, seed, mesh), mesh)
    values = [measure.host_value(o)[0] for o in (out if isinstance(out, list | tuple) else [out])]
    return values, structure


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_quick_compiles_keep_the_census_and_the_values(assignment, course, monkeypatch):
    grader = grader_for(assignment, course)
    cases = [p for p in grader.tests if p.sig["kind"] in HARNESS]
    assert cases, f"{assignment} has no array cases"
    for planned in cases:
        fn = course.reference(grader.assignment, planned.task.name)
        quick_values, quick = _measured(fn, planned.sig, planned.seed)
        with monkeypatch.context() as m:
            m.setattr(measure, "compiler_options", lambda mesh: {})
            values, default = _measured(fn, planned.sig, planned.seed)
        assert quick == default, planned.id
        rtol, atol = planned.task.tolerance_for(planned.case.dtype)
        for got, want in zip(quick_values, values, strict=True):
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol, atol, err_msg=planned.id)


def test_the_options_are_used_on_cpu_only():
    assert compiler_options(MeshSpec.parse("8:i").build()) == QUICK_CPU
    on_gpu = SimpleNamespace(devices=np.array([SimpleNamespace(platform="gpu")]))
    assert compiler_options(on_gpu) == {}


def test_xla_accepts_the_flags_the_sandbox_starts_with():
    """An unknown flag in ``XLA_FLAGS`` stops every JAX process at its first compile."""
    code = "import jax; print(jax.jit(lambda x: x + 1)(1))"
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "XLA_FLAGS": xla_flags()},
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "2"), done.stderr[-500:]
