"""A function that never ends costs one time limit, not one per case: after its first timeout,
its other cases fail at once with the same reason, in the sandbox and in the trusted worker."""

from __future__ import annotations

import pytest

from autograder.grading.pipeline import trusted_worker
from autograder.grading.pipeline.grader import grader_for
from autograder.grading.sandbox.local import ProcessSandbox
from autograder.untrusted.runner import run_tests

from ..helpers.course import ASSIGNMENT, solved_notebook, write_submission
from ..helpers.submissions import wrong_submission


def test_the_sandbox_calls_a_function_that_timed_out_no_more(course, tmp_path):
    grader = grader_for(ASSIGNMENT, course, tmp_path)
    planned = [
        {"id": p.id, "sig": p.sig, "index": i, "timeout": 0.2}
        for i, p in enumerate(grader.tests)
        if p.task.name == "local_shape"
    ]
    calls = []

    def local_shape(*args):
        calls.append(args)
        while True:
            pass

    results = run_tests(planned, {"local_shape": local_shape}, {})
    assert len(planned) > 1 and len(calls) == 1
    assert list(results.values()) == [{"status": "timeout", "message": "local_shape took longer than 0.2 s"}] * len(
        planned
    )


@pytest.mark.slow
def test_the_trusted_worker_waits_out_a_hung_program_once(course, tmp_path, monkeypatch):
    """fold_rng_over_axis exports a program that never ends, on each of its cases: the worker is
    started once until the hang and once for the tests after it, not once more per hung case."""
    wrong = wrong_submission(ASSIGNMENT, "program_never_ends")
    notebook = write_submission(tmp_path, "s", solved_notebook(course, wrong.functions))
    grader = grader_for(ASSIGNMENT, course, timeout=40, test_timeout=4, startup=30, sandbox=ProcessSandbox())
    hung = [p for p in grader.tests if p.task.name == "fold_rng_over_axis"]
    started = []

    def counted(*args, **kwargs):
        started.append(args[0])
        return run_worker(*args, **kwargs)

    run_worker = trusted_worker.run_worker
    assert grader.references  # computed first: the reference run is not what is counted
    monkeypatch.setattr(trusted_worker, "run_worker", counted)
    report = grader.grade("s", notebook)
    first = grader.tests.index(hung[0])
    after = [p for p in grader.tests[first:] if p.task.name != "fold_rng_over_axis"]
    assert len(hung) > 1 and len(started) == (2 if after else 1), started
    fold = {t.name: t for t in report.tests if t.name.startswith("fold_rng_over_axis")}
    assert "the exported program did not finish" in fold["fold_rng_over_axis: values"].message
    assert fold["fold_rng_over_axis: hidden values"].status == "failed"
