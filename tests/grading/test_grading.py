"""The reference scores full marks; each known-wrong submission loses exactly what it should, for
the reason it should, in every assignment and through every sandbox."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from autograder.grading.pipeline.grader import Grader, grader_for
from autograder.grading.reports import scale_view
from autograder.grading.sandbox.docker_sandbox import DockerSandbox
from autograder.grading.sandbox.limits import Limits
from autograder.grading.sandbox.local import ProcessSandbox
from autograder.grading.sandbox.sandbox import Sandbox
from autograder.grading.submission.report import Report

from ..helpers import snapshot
from ..helpers.course import ASSIGNMENTS, full_marks, solved_notebook, total, write_submission
from ..helpers.submissions import WrongSubmission, selected_wrong, wrong_submissions

pytestmark = pytest.mark.slow

# Where each assignment is graded: every assignment in the process sandbox, and 02 in the docker
# sandbox too (01 meets the docker sandbox in tests/adversarial, with the same library and more).
RUNS = [("process", a) for a in ASSIGNMENTS] + [("docker", "02_sharded_matmul")]

# Short limits so that the loops in the library cost seconds, not minutes; 02's notebook measures
# every function on the way, so it needs longer to run.
LIMITS = {
    "01_collectives": {"timeout": 20, "test_timeout": 4, "startup": 30},
    "02_sharded_matmul": {"timeout": 120, "test_timeout": 8, "startup": 30},
    "04_fsdp_tensor_parallel": {"timeout": 120, "test_timeout": 8, "startup": 30},
    "05_transformer_parallel": {"timeout": 120, "test_timeout": 8, "startup": 30},
    "06_pipeline_experts": {"timeout": 120, "test_timeout": 8, "startup": 30},
    "07_inference": {"timeout": 120, "test_timeout": 8, "startup": 30},
}


def _runs(extra: Callable[[str, str], list] = lambda s, a: [()]) -> list:
    """``RUNS`` as pytest parameters, each docker one marked so; ``extra`` adds values per run."""
    return [
        pytest.param(
            sandbox,
            assignment,
            *more,
            marks=[pytest.mark.docker] if sandbox == "docker" else [],
            id="/".join([sandbox, assignment, *(getattr(m, "name", str(m)) for m in more)]),
        )
        for sandbox, assignment in RUNS
        for more in extra(sandbox, assignment)
    ]


@pytest.fixture(scope="module")
def graders(course, request) -> Callable[[str, str], Grader]:
    """One grader per (sandbox, assignment), made when first asked for: a docker one needs the
    engine and the course's image (under CI=true their absence fails the test)."""
    made: dict[tuple[str, str], Grader] = {}

    def get(sandbox: str, assignment: str) -> Grader:
        if (sandbox, assignment) not in made:
            box: Sandbox = ProcessSandbox()
            if sandbox == "docker":
                image, client = request.getfixturevalue("cpu_image"), request.getfixturevalue("client")
                box = DockerSandbox(image, Limits(), client)
            made[sandbox, assignment] = grader_for(assignment, course, sandbox=box, **LIMITS[assignment])
        return made[sandbox, assignment]

    return get


def _full_marks(grader: Grader) -> dict[str, float]:
    marks = {f"{t.name}: {part}": p for t in grader.tasks for part, p in t.points.items()}
    assert marks == full_marks(grader.assignment.name)  # the grader grades the tasks the spec defines
    return marks


@pytest.mark.parametrize("sandbox, assignment", _runs())
def test_reference_scores_full_marks(sandbox, assignment, graders, course, tmp_path):
    grader = graders(sandbox, assignment)
    nb = solved_notebook(course, assignment=assignment)
    report = grader.grade("reference", write_submission(tmp_path, "reference", nb, assignment))
    snapshot.assert_matches(report, f"{assignment}/{sandbox}/reference")
    assert report.status == "graded", report.message
    assert report.message == ""
    failed = {t.name: t.message for t in report.tests if t.status != "passed"}
    assert not failed
    assert {t.name: t.score for t in report.tests} == _full_marks(grader)
    assert report.score == report.max_score == total(assignment)
    # Each part with a realistic size is compiled there too, and the reference's program costs
    # there what the reference's record says.
    assert set(report.at_scale) == {t.name for t in grader.tasks if t.at_scale is not None}
    for name, scaled in report.at_scale.items():
        assert scaled["cost"] == scaled["reference"], name


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_hidden_cases_are_graded(assignment, graders):
    hidden = [c for t in graders("process", assignment).tasks for c in t.cases if c.hidden]
    meshes = {c.mesh for c in hidden if not c.args}
    assert meshes & {"4x2:x,y", "4:i", "4x2:data,model"} and {c.dtype for c in hidden} >= {"bfloat16", "float32"}


def test_every_ring_size_is_graded(graders):
    """The ring matmuls meet rings of 2, 4 and 8, and one axis of a 2-D mesh."""
    for task in graders("process", "02_sharded_matmul").tasks:
        if task.kind == "shard_map":
            sizes = {c.mesh_spec.axis_sizes[c.axis] for c in task.cases}
            assert sizes == {2, 4, 8} and any(len(c.mesh_spec.shape) == 2 for c in task.cases), task.name


@pytest.fixture(scope="module")
def graded_wrong(request, graders, course, tmp_path_factory) -> Iterator[Callable[[str, str, str], Future[Report]]]:
    """A wrong submission's report to come. The first test of a run hands in all of that run's
    selected wrong submissions, graded two at a time as ``jaxcourse grade --jobs 2`` does (a
    notebook's kernel and its layouts mostly wait on one thread), and each test reads its own: a
    grader's error stays with its submission."""
    selected = {(p["sandbox"], p["assignment"], p["wrong"].name) for p in selected_wrong(request)}
    pool = ThreadPoolExecutor(2)
    futures: dict[tuple[str, str, str], Future[Report]] = {}

    def get(sandbox: str, assignment: str, name: str) -> Future[Report]:
        if (sandbox, assignment, name) not in futures:
            grader = graders(sandbox, assignment)
            folder = tmp_path_factory.mktemp(f"{sandbox}-{assignment}")
            for wrong in wrong_submissions(assignment):
                if (sandbox, assignment, wrong.name) in selected:
                    nb = solved_notebook(course, wrong.functions, wrong.extra_cell, assignment)
                    notebook = write_submission(folder, wrong.name, nb, assignment)
                    futures[sandbox, assignment, wrong.name] = pool.submit(grader.grade, wrong.name, notebook)
        return futures[sandbox, assignment, name]

    yield get
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("sandbox, assignment, wrong", _runs(lambda s, a: [(w,) for w in wrong_submissions(a)]))
def test_wrong_submission_loses_exactly_its_points(
    sandbox: str, assignment: str, wrong: WrongSubmission, graders, graded_wrong
):
    grader = graders(sandbox, assignment)
    report = graded_wrong(sandbox, assignment, wrong.name).result()
    snapshot.assert_matches(report, f"{assignment}/{sandbox}/{wrong.name}")
    assert report.status == wrong.status, report.message
    if wrong.status != "graded":
        assert report.score == 0 and wrong.message in report.message, report.message
        assert all(t.message == report.message for t in report.tests)
        return
    assert report.message == ""
    assert {t.name: t.score for t in report.tests} == {**_full_marks(grader), **wrong.expected}
    for test in report.tests:
        if test.name in wrong.expected:  # each lost test says why, in the words its file gives
            assert test.status == "failed" and wrong.reasons[test.name] in test.message, (test.name, test.message)
        else:
            assert test.status == "passed", (test.name, test.message)
    _pictures_explain_the_failures(report)
    # A function is projected at scale once its values are right on every case, and only then.
    parts = [t.name.split(": ", 1) for t in report.tests if t.status != "passed"]
    wrong_values = {function for function, part in parts if part in ("values", "hidden values")}
    assert set(report.at_scale) == {t.name for t in grader.tasks if t.at_scale is not None} - wrong_values
    for function, least in wrong.at_scale.items():  # what its waste would cost at a realistic size
        yours, reference = scale_view.projections(report.at_scale[function], "8 x H100 SXM")
        assert yours.total_s >= least * reference.total_s, (function, yours, reference)


def _pictures_explain_the_failures(report) -> None:
    """Traffic over the minimum comes with its bar chart; a ring that sends past its neighbours
    with its steps drawn; a wrong output sharding with both layouts;
    matmuls that wait for every transfer with each device's steps, their matmuls where they could
    start; state held
    beyond its share with each leaf's bytes against its share."""
    for test in report.tests:
        if test.status != "failed" or test.visibility == "hidden":
            continue
        if test.name.endswith(": communication") and test.message.startswith("mesh"):
            assert test.figure and test.figure["kind"] == "traffic", test
            assert test.figure["sent"] > test.figure["minimum"] or test.figure["sent"] != test.figure["reference"]
        if "computes nothing while the blocks travel" in test.message:  # its matmuls where they could start
            assert test.figure and test.figure["kind"] == "ring", test
            late = [i for i, slot in enumerate(test.figure["computes"]) if any(r is not None for r in slot)]
            assert len(late) < len(test.figure["steps"]) + 1, test  # not a matmul in every column
        if test.name.endswith(": memory") and test.message.startswith("mesh"):
            assert test.figure and test.figure["kind"] == "memory", test
            assert any(held > share for _, held, share in test.figure["leaves"]), test
        if "sends to devices that are not its neighbours" in test.message:  # the ring, its far sends in red
            assert test.figure and test.figure["kind"] == "ring" and test.figure["far"], test
        if test.name.endswith(": values") and "output sharding" in test.message:
            assert test.figure and test.figure["kind"] == "sharding", test
