"""No lecture answers an assignment's part: the lectures teach ring attention, the sequence-parallel
block, GPipe and expert routing on other layouts than the assignments' parts, so a student still
has to understand them to pass. Each function a lecture defines (and each exercise's worked answer,
which a student who did the exercise has), called as an assignment part with the part's leading
arguments (a student's first adaptation), is graded by the part's check, hidden cases included, and
earns no more than half of it.

The pairing rule. A part's function is called with ``n`` positional arguments (and, for some parts,
keywords), as the harness calls it: read by calling a probe the harness's way, so the rule follows
the harness. A lecture function that needs ``k <= n`` positional arguments and takes ``m >= 1`` is
paired with the part, and called with the first ``min(m, n)`` of them and the part's keywords that it
takes by name: ``lambda *args, **kw: f(*args[:m], **taken)``, named as the part. A function that
takes no argument cannot be called with the part's (it ignores them all: a constant, no
adaptation), nor one that needs more than the part gives or a keyword the part never passes.

Kinds. A lecture function declares no kind, and sorting them by what the lecture does with each
(a ``shard_map`` body, a jitted step, plain arithmetic) would be a judgement that could hide the
pair the test exists to find; so every function is tried on every part it can be called as, of
the kinds ``judge`` runs in this process (python, shard_map, sharded_step, train_step): about 3,400
pairs, 0.04 s each on average, as a pair of different kinds fails at once (a ``shard_map`` body
given integers, a cost model given tracers). The ``training`` parts (03's ``make_global_batch`` and
``train``) are not tried: they are judged together on runs of launched processes over the
assignment's own model and data (``local_batch``, ``init_state``), which no lecture defines, at
about 50 s a pair (lecture 07's ``train`` as 03's, 0/25), where some 190 pairs would qualify.

A check that raises instead of judging fails the test too: ``judge`` promises a verdict.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import pytest

from autograder.core.tasks import Task
from autograder.grading.student.self_check import judge
from autograder.harness.calls import CALLS, signature
from autograder.specs import ASSIGNMENTS

from ..helpers.lecture_functions import LECTURES, lecture_functions, positional

IN_PROCESS = ("python", "shard_map", "sharded_step", "train_step")  # the kinds judge() runs here
PARTS = [(a.name, t) for a in ASSIGNMENTS.values() for t in a.tasks if t.kind in IN_PROCESS]


class _Called(Exception):
    pass


def leading_arguments(assignment: str, task: Task) -> int:
    """How many positional arguments the harness gives the part's function: read from a probe it
    calls as it calls a student's, on each visible case."""
    seen: list[int] = []

    def probe(*args: Any, **kwargs: Any) -> Any:
        seen.append(len(args))
        raise _Called

    for case in task.cases:
        try:
            CALLS[task.kind].in_sandbox(probe, signature(task, case, assignment), {task.name: probe})
        except _Called:
            pass
    assert seen, f"the harness never called {task.name}"
    return max(seen)


def adaptation(fn: Callable[..., Any], task: Task, n: int) -> Callable[..., Any] | None:
    """``fn`` called as ``task`` with the part's leading arguments, or None where it cannot be."""
    arity = positional(fn)
    if arity is None:
        return None
    needs, takes = arity
    if needs > n or takes < 1:
        return None
    params = inspect.signature(fn).parameters
    by_name = any(p.kind is p.VAR_KEYWORD for p in params.values())
    named = [name for name, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    def adapted(*args: Any, **kwargs: Any) -> Any:
        m = int(min(takes, len(args)))
        given = set(list(params)[:m])
        taken = {k: v for k, v in kwargs.items() if (by_name or k in named) and k not in given}
        return fn(*args[:m], **taken)

    adapted.__name__ = adapted.__qualname__ = task.name
    return adapted


@pytest.fixture(scope="module", autouse=True)
def unfiltered_tracebacks():
    """JAX trims its frames from every traceback it raises through, testing each frame's file
    against its own paths: a third of this module's time, as most pairs raise. No verdict reads a
    traceback, so the pairs are judged with it off, and the setting is put back after."""
    before = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "off")
    yield
    jax.config.update("jax_traceback_filtering", before)


@pytest.fixture(scope="module")
def arguments() -> dict[str, int]:
    return {task.name: leading_arguments(assignment, task) for assignment, task in PARTS}


@pytest.mark.slow
@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_no_lecture_function_earns_half_of_a_part(path: Path, arguments: dict[str, int]):
    earned, crashed, tried = [], [], 0
    for name, fn in lecture_functions(path).items():
        for assignment, task in PARTS:
            adapted = adaptation(fn, task, arguments[task.name])
            if adapted is None:
                continue
            tried += 1
            pair = f"{path.stem}: {name}, adapted as {assignment}'s {task.name}"
            try:
                result = judge(adapted, hidden=True, task=task.name)
            except Exception as err:  # judge() promises a verdict: a crash is the check's own bug
                crashed.append(f"{pair}: the check raised {type(err).__name__}: {str(err)[:200]}")
                continue
            if result.score > 0.5 * result.max_score:
                earned.append(f"{pair}, earns {result.score:g}/{result.max_score:g}:\n{result!r}")
    assert tried, f"no function of {path.stem} could be called as any part"
    problems = []
    if earned:
        problems.append("a lecture answers more than half of an assignment's part:\n\n" + "\n\n".join(earned))
    if crashed:
        problems.append("the check could not judge these (the grader's own bug):\n" + "\n".join(crashed))
    assert not problems, "\n\n".join(problems)
