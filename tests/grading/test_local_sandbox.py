"""The local sandbox forks each runner from a warm server that imported JAX once for the class's
compile cache, and a forked runner hands in what a cold one does: the same results, the same
artifacts, the same command line, folder and environment for the notebook. A run that may write
the cache starts cold, with no server started for it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from autograder.core.protocol import ARTIFACTS, PLAN, RESULTS
from autograder.grading.pipeline.grader import grader_for
from autograder.grading.pipeline.sandboxed import workspace
from autograder.grading.sandbox import local
from autograder.grading.sandbox.local import ProcessSandbox
from autograder.grading.sandbox.sandbox import CompileCache
from autograder.grading.submission import notebooks as nbio

from ..helpers.course import ASSIGNMENT, solved_notebook

pytestmark = pytest.mark.slow

# What the notebook sees of its process, printed on a line of its own in the runner's log.
SEEN = (
    "import json, os, sys\n"
    "print('SEEN', json.dumps({'parent': os.getppid(), 'argv': sys.argv[1:], 'cwd': os.getcwd(),"
    " 'home': os.environ['HOME'], 'env': sorted(os.environ)}))"
)


@pytest.fixture(scope="module")
def grader(course, tmp_path_factory):
    return grader_for(ASSIGNMENT, course, cache=tmp_path_factory.mktemp("cache"), sandbox=ProcessSandbox())


def _run(box, grader, course, root: Path, cache):
    """One solved notebook's visible cases run by ``box``: its outcome, its results (less the
    runner's own timings), its artifacts and what its notebook saw."""
    cells = nbio.code_cells(solved_notebook(course), grader.source)
    root.mkdir()
    work = workspace(grader, [*cells, {"grade_id": None, "source": SEEN}], root)
    plan = json.loads((work.job / PLAN).read_text())
    plan.pop("hidden_wait", None)  # no grader seals the visible results here: no hidden cases
    (work.job / PLAN).write_text(json.dumps(plan))
    outcome = box.run(work.job, work.out, grader.timeout, cache)
    results = json.loads((work.out / RESULTS).read_text())
    results.pop("profile")
    with np.load(work.out / ARTIFACTS) as stored:
        artifacts = {name: stored[name].tobytes() for name in stored.files}
    line = next(x for x in (root / "runner.log").read_text().splitlines() if x.startswith("SEEN "))
    seen = json.loads(line.removeprefix("SEEN "))
    for key in ("argv", "cwd", "home"):  # each run's own folder, named relative to it
        seen[key] = json.loads(json.dumps(seen[key]).replace(str(root), "ROOT"))
    return outcome, results, artifacts, seen


def test_a_forked_runner_hands_in_what_a_cold_one_does(grader, course, tmp_path):
    cache = grader.sandbox_cache
    assert cache is not None and not cache.writable
    cold = _run(ProcessSandbox(forks=False), grader, course, tmp_path / "cold", cache)
    forked = [_run(grader.sandbox, grader, course, tmp_path / name, cache) for name in ("first", "second")]
    server = local.warm_runner(cache).server
    assert server is not None and not server.gone
    assert cold[0].status == "ok" and [f[0].status for f in forked] == ["ok", "ok"], forked[0][0].log_tail
    assert cold[3]["parent"] == os.getpid()  # started by this process
    assert [f[3]["parent"] for f in forked] == [server.proc.pid] * 2  # both children of one server
    for _, results, artifacts, seen in forked:
        assert results == cold[1] and artifacts == cold[2]
        assert {k: v for k, v in seen.items() if k != "parent"} == {
            **{k: v for k, v in cold[3].items() if k != "parent"},
            "env": sorted({*cold[3]["env"], "OPENBLAS_NUM_THREADS"}),  # the one variable the fork needs
        }
    assert cold[3]["cwd"] == cold[3]["home"] == "ROOT/home"


def test_a_run_that_may_write_the_cache_starts_cold(grader, course, tmp_path):
    writable = CompileCache(tmp_path / "own-cache", writable=True)
    writable.path.mkdir()
    outcome, _, _, seen = _run(grader.sandbox, grader, course, tmp_path / "run", writable)
    assert outcome.status == "ok", outcome.log_tail
    assert seen["parent"] == os.getpid() and writable.path not in local._WARM_RUNNERS
    assert any(writable.path.iterdir()), "a cold runner on a writable cache keeps what it compiles"


def test_a_runner_that_dies_mid_way_leaves_the_same_last_output_forked_or_cold(grader, tmp_path):
    """Its output is buffered as a cold process's is when written to a file: what it printed last
    before ``os._exit`` is lost the same way (a snapshot records that last output)."""
    cells = [{"grade_id": None, "source": "for i in range(3):\n    print('line', i)\nimport os\nos._exit(9)"}]
    outcomes = []
    for name, box in (("cold", ProcessSandbox(forks=False)), ("forked", grader.sandbox)):
        (tmp_path / name).mkdir()
        work = workspace(grader, cells, tmp_path / name)
        outcomes.append(box.run(work.job, work.out, grader.timeout, grader.sandbox_cache))
    cold, forked = outcomes
    assert (cold.status, cold.reason) == (forked.status, forked.reason) == ("crashed", "exited with status 9")
    assert forked.log_tail == cold.log_tail
