"""The trusted side compiles with ``QUICK_CPU`` to save time: a program compiled so must show a
census the same as JAX's default compile does, and the same values, or the saving would change
grades. Checked on every array case of every assignment, the reference's program each time."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from autograder.core import quick_compile
from autograder.core.quick_compile import QUICK_CPU, RUNNER_FLAGS, compiler_options, runner_env, xla_flags
from autograder.grading.pipeline.grader import grader_for
from autograder.harness import shard_map, sharded_step
from autograder.mesh import MeshSpec
from autograder.trusted import measure
from autograder.trusted.inputs import make_inputs

from ..helpers.course import ASSIGNMENTS

HARNESS = {"shard_map": shard_map, "sharded_step": sharded_step}
# The one difference seen: XLA:CPU's loop emitters give an indexed update of a donated cache
# (07's decode steps, ``cache.at[rows, :, pos].set(...)``, a scatter) a temporary of 96 to 144
# bytes more than its fusion emitters do, at most 1.4% of the step's peak on these small cases.
# The grader compiles the reference and the submission alike, so the ratio it judges moves by
# about that; every other figure of these cases must still be the same.
PEAK_WITHIN = {("07_inference", "tp_decode_step"): 0.02, ("07_inference", "fixed_decode_step"): 0.02}


def _measured(fn, sig, seed):
    wrapped, _, mesh = HARNESS[sig["kind"]].build(fn, sig)
    out, structure = measure.execute(wrapped, make_inputs(sig, seed, mesh), mesh)
    values = [measure.host_value(o)[0] for o in (out if isinstance(out, list | tuple) else [out])]
    return values, structure


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_quick_compiles_keep_the_census_and_the_values(assignment, course, monkeypatch):
    grader = grader_for(assignment, course)
    cases = [p for p in grader.tests if p.sig["kind"] in HARNESS and not p.projected]  # run: no case at scale
    assert cases, f"{assignment} has no array cases"
    for planned in cases:
        fn = course.reference(grader.assignment, planned.task.name)
        quick_values, quick = _measured(fn, planned.sig, planned.seed)
        with monkeypatch.context() as m:
            m.setattr(measure, "compiler_options", lambda mesh: {})
            values, default = _measured(fn, planned.sig, planned.seed)
        within = PEAK_WITHIN.get((assignment, planned.task.name))
        if within is not None:
            peaks = quick["signature"]["peak"], default["signature"]["peak"]
            assert abs(peaks[0] - peaks[1]) <= within * peaks[1], (planned.id, peaks)
            quick["signature"]["peak"] = default["signature"]["peak"]
        assert quick == default, planned.id
        tolerance = planned.task.tolerance_for(planned.case.dtype)
        for got, want in zip(quick_values, values, strict=True):
            want = want.astype(np.float64)
            atol = tolerance.atol_for(want)
            np.testing.assert_allclose(got.astype(np.float64), want, tolerance.rtol, atol, err_msg=planned.id)


def test_the_options_are_used_on_cpu_only():
    assert compiler_options(MeshSpec.parse("8:i").build()) == QUICK_CPU
    on_gpu = SimpleNamespace(devices=np.array([SimpleNamespace(platform="gpu")]))
    assert compiler_options(on_gpu) == {}


def _runner_like(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A process that sets ``XLA_FLAGS`` as the sandbox's runner does, before its JAX starts, then
    compiles: what flags it took, and its answer."""
    code = (
        "import os; from autograder.core.quick_compile import runner_flags\n"
        "os.environ['XLA_FLAGS'] = runner_flags()\n"
        "import jax; print(os.environ['XLA_FLAGS']); print(jax.jit(lambda x: x + 1)(1))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )


def test_xla_accepts_the_flags_the_sandbox_starts_with():
    """An unknown flag in ``XLA_FLAGS`` stops every JAX process at its first compile. This XLA
    knows every one of ``QUICK_CPU``'s, and the runner gets them all."""
    assert xla_flags().split() == [f"--{name}={str(value).lower()}" for name, value in QUICK_CPU.items()]
    done = _runner_like(runner_env())
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split("\n")[:2] == [xla_flags(), "2"]


# An option no XLA has, to stand for one that the running XLA lacks (as 0.11 lacks one of 0.10's).
NO_SUCH_OPTION = "xla_jaxcourse_no_such_option"


def _ask_afresh() -> None:
    """What the compiler knows is asked once per process: forget the answers."""
    quick_compile.known_options.cache_clear()
    quick_compile.xla_flags.cache_clear()


@pytest.fixture
def afresh(monkeypatch, tmp_path):
    """The compiler asked again, and again after the test; no answer kept on disk from before."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _ask_afresh()
    yield monkeypatch
    _ask_afresh()


def test_an_option_the_compiler_lacks_is_left_out_with_a_warning(course, afresh, caplog):
    import jax

    grader = grader_for(ASSIGNMENTS[0], course)
    planned = next(p for p in grader.tests if p.sig["kind"] in HARNESS)
    fn = course.reference(grader.assignment, planned.task.name)
    _, census = _measured(fn, planned.sig, planned.seed)  # every option known
    afresh.setitem(QUICK_CPU, NO_SUCH_OPTION, False)
    _ask_afresh()
    with caplog.at_level(logging.WARNING, logger=quick_compile.__name__):
        options = compiler_options(MeshSpec.parse("8:i").build())
        _, lacking = _measured(fn, planned.sig, planned.seed)  # compiles with what the compiler knows
    assert options == {name: value for name, value in QUICK_CPU.items() if name != NO_SUCH_OPTION}
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and NO_SUCH_OPTION in warned[0] and jax.__version__ in warned[0], warned
    assert lacking == census, planned.id


def test_an_option_refused_for_another_reason_is_an_error(afresh):
    import jax

    afresh.setitem(QUICK_CPU, "xla_backend_optimization_level", "fast")
    with pytest.raises(jax.errors.JaxRuntimeError, match="not a valid"):
        compiler_options(MeshSpec.parse("8:i").build())


def test_a_process_starts_with_the_flags_when_this_xla_lacks_one(afresh, caplog):
    afresh.setitem(QUICK_CPU, NO_SUCH_OPTION, False)
    with caplog.at_level(logging.WARNING, logger=quick_compile.__name__):
        flags = xla_flags()
    assert flags.split() == [
        f"--{name}={str(value).lower()}" for name, value in QUICK_CPU.items() if name != NO_SUCH_OPTION
    ]
    assert any(NO_SUCH_OPTION in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    code = "import jax; print(jax.jit(lambda x: x + 1)(1))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "XLA_FLAGS": flags},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "2"), done.stderr[-500:]


def test_a_runner_takes_the_flags_this_xla_knows_when_one_is_unknown(afresh):
    afresh.setitem(QUICK_CPU, NO_SUCH_OPTION, False)
    done = _runner_like(runner_env())
    assert done.returncode == 0, done.stderr[-500:]
    taken, answer = done.stdout.split("\n")[:2]
    assert answer == "2" and NO_SUCH_OPTION not in taken and "--xla_backend_optimization_level=0" in taken


def test_a_runner_takes_no_flags_asked_of_another_jaxlib():
    """A container whose image has another JAX than the grader's compiles as JAX does by default."""
    done = _runner_like({RUNNER_FLAGS: f"0.0.1 --{NO_SUCH_OPTION}=false"})
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split("\n")[:2] == ["", "2"]


def test_the_flags_are_asked_once_per_jaxlib(afresh, caplog):
    """Kept on disk: a grader's next run starts no process to ask, and still says what it left out."""
    afresh.setitem(QUICK_CPU, NO_SUCH_OPTION, False)
    asked = xla_flags()
    xla_flags.cache_clear()
    afresh.setattr(quick_compile.subprocess, "run", lambda *a, **k: pytest.fail("asked again"))
    with caplog.at_level(logging.WARNING, logger=quick_compile.__name__):
        assert xla_flags() == asked
    assert any(NO_SUCH_OPTION in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_a_process_handed_the_flags_its_xla_knows_takes_them_as_its_options_and_compiles_nothing(afresh, compiles):
    """The trusted worker's jobs are each a fresh process: handed the flags (``runner_env``),
    one learns its options without compiling a probe; flags asked of another jaxlib are not its."""
    afresh.setenv(RUNNER_FLAGS, f"{quick_compile.jaxlib_version()} --xla_backend_optimization_level=0")
    assert quick_compile.known_options() == {"xla_backend_optimization_level": 0}
    assert compiles == []
    afresh.setenv(RUNNER_FLAGS, "0.0.1 --xla_backend_optimization_level=0")
    _ask_afresh()
    assert quick_compile.known_options() == QUICK_CPU and len(compiles) == 1  # asked of its own compiler


def test_the_trusted_worker_is_handed_the_flags():
    from autograder.grading.pipeline.worker_process import server_command

    assert runner_env().items() <= server_command().env.items()
