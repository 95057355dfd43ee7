"""docs/instructor.md's "Adding a part to an assignment", followed on a copy of the course: its
blocks add a ring all-to-all to 01 where they say (``tests/helpers/walkthrough.py``), the tests the
steps touch pass on the copy, and each rule a new part meets, broken, fails with a message that
names the rule and its fix."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.core import records

from ..helpers import snapshot
from ..helpers.course import REPO
from ..helpers.rules import GUIDE, grade_cells, oracle_problems, points_total, unordered_at_scale, unsolved_failures
from ..helpers.walkthrough import Step, apply, copy_sources, load, steps

ASSIGNMENT, PART = "01_collectives", "ring_all_to_all"
NOTEBOOK = f"assignments/source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"


def _spec(root: Path):
    """The copy's 01 spec, loaded beside the checkout's."""
    return load(root / "autograder" / "specs" / "collectives.py", "autograder.specs._copied_collectives").ASSIGNMENT


def _oracles(root: Path) -> dict[str, object]:
    return load(root / "tests" / "oracles" / "collectives.py", "_copied_oracles").ORACLES


def _worse_pairs(root: Path) -> set[tuple[str, str]]:
    """The (assignment, task) of each of 01's entries in the copy's WORSE, read without importing
    the test."""
    tree = ast.parse((root / "tests" / "trusted" / "test_projection.py").read_text())
    worse = next(n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "WORSE")
    assert isinstance(worse, ast.List)
    pairs = {(ast.literal_eval(e.elts[0]), ast.literal_eval(e.elts[1])) for e in worse.elts if isinstance(e, ast.Tuple)}
    return {p for p in pairs if p[0] == ASSIGNMENT}


def _at_scale(spec) -> set[tuple[str, str]]:
    return {(spec.name, t.name) for t in spec.tasks if t.at_scale is not None}


@pytest.fixture(scope="module")
def walked(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A copy of the course after every step of the guide, and what each rule said after its first
    step alone (the spec's new task): the state a new instructor's first test run meets."""
    root = copy_sources(tmp_path_factory.mktemp("course"))
    first, *rest = steps()
    assert (first.path, first.where) == ("autograder/specs/collectives.py", "in ASSIGNMENT's tasks"), first
    apply(first, root)
    spec = _spec(root)
    said = {
        "points": points_total(spec),
        "oracles": "\n".join(oracle_problems(spec, _oracles(root))),
        "at scale": unordered_at_scale(_at_scale(spec), _worse_pairs(root)),
    }
    for step in rest:
        apply(step, root)
    return root, said


def test_the_guide_names_a_file_for_every_step_and_each_exists():
    named = steps()
    assert {s.path for s in named} >= {
        "autograder/specs/collectives.py",
        "solutions/collectives.py",
        NOTEBOOK,
        "tests/oracles/collectives.py",
        "tests/trusted/test_projection.py",
    }
    for step in named:
        assert (REPO / step.path).is_file() or (not step.where and step.path.startswith("tests/submissions/")), (
            step.path
        )


def test_a_step_that_names_what_the_code_lacks_fails(tmp_path):
    """The walk-through fails where the guide and the code disagree, not silently."""
    root = copy_sources(tmp_path)
    wrong = [
        Step("solutions/collectives.py", "in HIDDEN_CASE", '"x": (),\n'),
        Step("autograder/specs/collectives.py", "in ASSIGNMENT's task", "Task(),\n"),
        Step("solutions/kollectives.py", "in TARGETS", '"x": None,\n'),
        Step(NOTEBOOK, "a cell after test_ring_all_to_all", "check(x)", {"nbgrader": {}}),
        Step("tests/oracles/collectives.py", "", "ORACLES = {}\n"),
    ]
    for step in wrong:
        with pytest.raises(AssertionError):
            apply(step, root)


def test_the_first_step_alone_breaks_each_rule_and_its_message_names_the_fix(walked):
    _, said = walked
    assert "01_collectives totals 60 points; every assignment totals 50: take" in said["points"]
    assert f"tests/oracles/collectives.py's ORACLES has no stand-in for {PART}" in said["oracles"]
    assert f"01_collectives/{PART} projected at scale with no worse program" in said["at scale"]
    assert "WORSE in tests/trusted/test_projection.py" in said["at scale"]
    assert all(GUIDE in message for message in said.values())


def test_after_every_step_the_rules_hold_in_this_process(walked):
    root, _ = walked
    spec = _spec(root)
    assert PART in {t.name for t in spec.tasks}
    assert points_total(spec) == ""
    assert oracle_problems(spec, _oracles(root)) == []
    assert unordered_at_scale(_at_scale(spec), _worse_pairs(root)) == ""


def test_a_grade_cell_that_passes_unsolved_fails_validation_with_the_fix(walked):
    root, _ = walked
    grades = grade_cells(nbformat.read(root / NOTEBOOK, as_version=4).cells)
    assert grades == 7  # the new part's grade cell counted, no count kept by hand
    assert unsolved_failures(ASSIGNMENT, grades, "[ValidateApp] VALIDATION FAILED ON 7 CELL(S)!") == ""
    said = unsolved_failures(ASSIGNMENT, grades, "[ValidateApp] VALIDATION FAILED ON 6 CELL(S)!")
    assert "failed on 6 of the 7 grade cells of 01_collectives's unsolved release" in said and GUIDE in said
    assert "failed on none of the 7" in unsolved_failures(ASSIGNMENT, grades, "Success! Your notebook passes")


# The files whose every test a new part touches, on 01 alone (their sweeps over the other
# assignments are the checkout's business): the notebook's sync with the spec and the solutions,
# and every submission file's rules.
TOUCHED_FILES = ("tests/specs/test_solutions_sync.py", "tests/test_submission_files.py")
OTHER_ASSIGNMENTS = "not (02_ or 03_ or 04_ or 05_ or 06_ or 07_)"
SYNC, FILES = TOUCHED_FILES
# Their tests of the new part's cells and files, which must be among those that passed.
OF_THE_PART = (
    f"{SYNC}::test_solution_region_is_the_reference[{ASSIGNMENT}/{PART}]",
    f"{SYNC}::test_every_task_has_a_solution_cell[{ASSIGNMENT}/{PART}]",
    f"{SYNC}::test_grade_cell_points_and_calls_match_the_spec[{ASSIGNMENT}/{PART}]",
    f"{SYNC}::test_grade_cell_points_and_calls_match_the_spec[{ASSIGNMENT}/ring_all_gather]",  # its points moved
    f"{FILES}::test_wrong_submission_states_its_reasons[{ASSIGNMENT}/all_to_all_passes_every_block]",
    f"{FILES}::test_wrong_submission_states_its_reasons[{ASSIGNMENT}/all_to_all_leftwards]",
    f"{FILES}::test_an_honest_variant_keeps_at_least_85_percent_of_each_part_it_writes[{ASSIGNMENT}/all_to_all_leftwards]",
)


def _touched(root: Path) -> list[str]:
    """The tests parametrized on the new part that the steps touch, and the rules over every part:
    the oracle, the closed form on every case, the part at scale and its worse program."""
    solutions = load(root / "solutions" / "collectives.py", "_copied_solutions")
    task = next(t for t in _spec(root).tasks if t.name == PART)
    closed_form = "tests/specs/test_targets.py::test_the_reference_sends_exactly_its_closed_form"
    return [
        "tests/specs/test_oracles.py::test_every_assignment_and_lecture_but_the_multiprocess_one_has_stand_ins",
        f"tests/specs/test_oracles.py::test_the_reference_agrees_with_its_stand_in[collectives/{PART}]",
        "tests/specs/test_targets.py::test_every_part_held_to_a_least_has_its_closed_form",
        *(f"{closed_form}[{ASSIGNMENT}/{PART}/{c.label()}]" for c in (*task.cases, *solutions.HIDDEN_CASES[PART])),
        "tests/trusted/test_projection.py::test_every_part_projected_at_scale_has_a_worse_program_to_order",
        f"tests/trusted/test_projection.py::test_every_part_compiles_at_scale_and_fits_one_chip[{ASSIGNMENT}-{PART}]",
        "tests/trusted/test_projection.py::test_a_worse_program_with_the_same_values_never_projects_faster"
        f"[{ASSIGNMENT}-{PART}-all_to_all_passes_every_block]",
    ]


def test_the_tests_the_steps_touch_pass_on_the_copy(walked):
    """The suite's own tests, run in the copy (its package, solutions and tests first on the path),
    each of the new part's among those that passed."""
    root, _ = walked
    keep = {k: v for k, v in os.environ.items() if not k.startswith("JAXCOURSE_")}
    env = {**keep, "PYTHONPATH": str(root), "JAXCOURSE_ROOT": str(root)}
    plugins = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
    touched = _touched(root)
    command = [sys.executable, "-m", "pytest", "-q", "-rA", *plugins, "-k", OTHER_ASSIGNMENTS, *TOUCHED_FILES, *touched]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    passed = set(re.findall(r"^PASSED (.+)$", done.stdout, re.M))
    assert {*touched, *OF_THE_PART} <= passed, sorted({*touched, *OF_THE_PART} - passed)


def test_a_changed_or_missing_snapshot_record_names_make_snapshots(monkeypatch):
    """The new part changes 01's reference record, and its wrong submission has none yet."""
    monkeypatch.delenv("JAXCOURSE_UPDATE_SNAPSHOT", raising=False)  # never rewrite the checkout's
    key = f"{ASSIGNMENT}/process/reference"
    report = snapshot.report_of("reference", ASSIGNMENT, snapshot.records()[key])
    report.tests.append(records.TestResult(f"{PART}: values", f"test_{PART}", 2.0, 2.0, "passed", "", "visible"))
    with pytest.raises(AssertionError, match=f"differs from its snapshot record '{key}'") as changed:
        snapshot.assert_matches(report, key)
    with pytest.raises(AssertionError, match="the snapshot has no record") as missing:
        snapshot.assert_matches(report, f"{ASSIGNMENT}/process/all_to_all_passes_every_block")
    for raised in (changed, missing):
        assert "re-record with `make snapshots`" in str(raised.value)


def test_make_snapshots_reruns_every_test_that_writes_a_record():
    """`make snapshots` sets JAXCOURSE_UPDATE_SNAPSHOT=1 and runs exactly the test files that call
    snapshot.assert_matches: a new one that records must join it (this file's calls run with the
    switch off, to read their messages)."""
    makefile = (REPO / "Makefile").read_text()
    recipe = re.search(r"^snapshots:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "the Makefile has no snapshots target"
    command = recipe.group(1).replace("\\\n", " ").split("\n")[0]
    assert "JAXCOURSE_UPDATE_SNAPSHOT=1" in command and "-m pytest" in command
    assert set(re.findall(r"tests/\S+\.py", command)) == set(snapshot.RECORDED_BY)
    writers = {
        str(p.relative_to(REPO))
        for p in (REPO / "tests").rglob("test_*.py")
        if "assert_matches(" in p.read_text() and p != Path(__file__)
    }
    assert writers == set(snapshot.RECORDED_BY)
