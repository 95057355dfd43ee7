"""The class's leaderboard: correct submissions ranked by their programs' projected time at a
realistic size on the machine the instructor picks, pseudonymous unless names are asked for;
each correct student's feedback says her rank. Reports made here (fast), then a class graded for
real."""

from __future__ import annotations

import dataclasses
import html
import json

import pytest
from nbgrader.api import Gradebook

from autograder.core.course import tool_env
from autograder.core.records import CostRecord, ScaledProgram
from autograder.core.records import TestResult as Result  # not Test*: pytest would collect it
from autograder.grading.record import batch, gradebook
from autograder.grading.record import recorder as recorder_module
from autograder.grading.record.recorder import Recorder
from autograder.grading.reports import class_report, class_report_html, feedback, leaderboard
from autograder.grading.reports.class_report import read_reports, summarise
from autograder.grading.reports.leaderboard import BoardRules, LeaderboardError, pseudonym
from autograder.grading.reports.scale_view import projections
from autograder.grading.submission.report import Report
from classroom.hub.class_page import class_view

from ..helpers.course import ASSIGNMENT, reference_sources, solved_notebook, write_submission
from ..helpers.submissions import wrong_submission

H100 = BoardRules("8 x H100 SXM")
RING = [[i, (i + 1) % 8] for i in range(8)]


def _cost(flops: float = 1e12, sent: float = 1e8) -> CostRecord:
    """bf16 matmuls and one ring permute of ``sent`` bytes per device, nothing beside it."""
    permute = {"kind": "collective-permute", "axes": ["i"], "array_bytes": sent, "times": 1, "pairs": RING}
    return {
        "flops": flops,
        "hbm_bytes": 1e9,
        "traffic": {"i": sent},
        "peak": 1 << 30,
        "dots": {"bf16": 1.0},
        "collectives": [{**permute, "scope": 0, "beside": []}],  # type: ignore[typeddict-item]
        "scopes": [{"times": 1, "work": []}],
    }


REFERENCE = _cost()


def _scaled(cost: CostRecord) -> ScaledProgram:
    return {"case": "mesh 8:i", "why": "a 32k sequence", "mesh": {"i": 8}, "cost": cost, "reference": REFERENCE}


def _report(student: str, cost: CostRecord | None = None, passed: bool = True, status: str = "graded") -> Report:
    test = Result("f: values", "f", float(passed), 1.0, "passed" if passed else "failed", "", "visible")
    at_scale = {"f": _scaled(cost)} if cost is not None else {}
    return Report(student, ASSIGNMENT, status, "", [test], "fp", at_scale=at_scale)


def _board(reports, rules=H100, shown=str):
    board = leaderboard.leaderboard(ASSIGNMENT, reports, rules, shown)
    assert board is not None
    return board


def test_correct_submissions_rank_fastest_first_and_ties_share_a_rank():
    reports = [
        _report("slow", _cost(4e12)),
        _report("fast", _cost(0.5e12)),
        _report("same1", _cost(2e12)),
        _report("same2", _cost(2e12)),
        _report("wrong", _cost(0.1e12), passed=False),  # fastest of all, and wrong: not ranked
        _report("crashed", status="crashed"),
    ]
    board = _board(reports)
    assert [(e.rank, e.shown) for e in board.entries] == [(1, "fast"), (2, "same1"), (2, "same2"), (4, "slow")]
    assert board.unranked == 1  # the wrong one; a notebook that was not graded is not a submission to rank
    slow = board.entries[-1]
    assert slow.seconds == projections(reports[0].at_scale["f"], "8 x H100 SXM")[0].total_s
    assert slow.signature == {"f": reports[0].at_scale["f"]["cost"]}  # each entry with its signature
    assert board.reference == projections(reports[0].at_scale["f"], "8 x H100 SXM")[1].total_s


def test_a_program_that_does_less_than_half_the_reference_s_work_at_scale_is_doubtful():
    """Right on every graded case, and at the size no case runs, a tenth of the reference's FLOPs:
    a function that reads its shapes to do less there. Half the work is still ranked."""
    idle = _report("idle", {**_cost(), "flops": 0.1 * REFERENCE["flops"]})
    half = _report("half", {**_cost(), "flops": 0.5 * REFERENCE["flops"], "hbm_bytes": 0.5 * REFERENCE["hbm_bytes"]})
    board = _board([idle, half, _report("ada", _cost())])
    assert [e.shown for e in board.entries] == ["half", "ada"] and board.doubtful == 1 and board.unranked == 0


def test_a_doubtful_program_s_feedback_says_what_it_spends_too_little_of():
    idle = _report("idle", {**_cost(), "flops": 0.1 * REFERENCE["flops"]})
    assert leaderboard.shortfalls(idle.at_scale["f"]) == ["FLOPs"]
    said = leaderboard.doubts(idle)
    assert said.startswith("Leaderboard: not ranked") and "(f's FLOPs)" in said
    assert said in feedback.markdown(idle) and html.escape(said) in feedback.to_html(idle)
    assert leaderboard.doubts(_report("ada", _cost())) == ""


def test_a_submission_missing_a_projection_is_not_ranked():
    board = _board([_report("ada", _cost()), dataclasses.replace(_report("bo", _cost()), at_scale={})])
    assert [e.shown for e in board.entries] == ["ada"] and board.unranked == 1


def test_an_assignment_with_nothing_at_scale_has_no_board():
    assert leaderboard.leaderboard(ASSIGNMENT, [_report("ada")], H100, str) is None


def test_the_machine_the_instructor_picks_decides_the_order():
    """A program that sends less and computes more wins between two hosts, where its ring's pairs
    3 -> 4 and 7 -> 0 cross hosts at the NIC's 50 GB/s; on one host's NVLink, the one that computes
    less does."""
    talks, computes = _report("talks", _cost(flops=1e12, sent=3e8)), _report("computes", _cost(flops=2e12, sent=1e8))
    one_host = _board([talks, computes], BoardRules("8 x H200"))
    two_hosts = _board([talks, computes], BoardRules("2 hosts x 4 H100 over 400 Gb/s"))
    assert [e.shown for e in one_host.entries] == ["talks", "computes"]
    assert [e.shown for e in two_hosts.entries] == ["computes", "talks"]


def test_pseudonyms_are_stable_keyed_and_tell_nothing_of_the_name():
    students = [f"student{i}" for i in range(200)]
    names = {pseudonym(s, "secret") for s in students}
    assert len(names) == len(students)  # no two students of a large class share one
    assert pseudonym("ada", "secret") == pseudonym("ada", "secret") != pseudonym("ada", "another secret")
    assert all("student" not in name for name in names)


def test_the_rules_come_from_jaxcourse_toml_with_a_one_line_error(tmp_path):
    (tmp_path / "jaxcourse.toml").write_text(
        '[leaderboard]\nmachine = "TPU v5e-8"\n[assignments.01_collectives.leaderboard]\nnames = true\n'
    )
    assert leaderboard.load(tmp_path, ASSIGNMENT) == BoardRules("TPU v5e-8", names=True)
    assert leaderboard.load(tmp_path, "02_sharded_matmul") == BoardRules("TPU v5e-8", names=False)
    (tmp_path / "jaxcourse.toml").write_text('[leaderboard]\nmachine = "a laptop"\n')
    with pytest.raises(LeaderboardError, match=r"machine = 'a laptop' must be one of 8 x H100 SXM, ") as err:
        leaderboard.load(tmp_path, ASSIGNMENT)
    assert "\n" not in str(err.value)


def test_the_class_report_shows_pseudonyms_unless_names_are_asked_for(tmp_path):
    for report in [_report("ada", _cost()), _report("bo", _cost(3e12)), _report("cy", _cost(), passed=False)]:
        gradebook.write_results(tmp_path / report.student / "results.json", report)
    results = read_reports(tmp_path, ASSIGNMENT)
    hidden = summarise(ASSIGNMENT, results, H100, "secret")
    page, data = class_report_html.to_html(hidden), json.dumps(hidden.to_json())
    assert [e.shown for e in hidden.leaderboard.entries] == [pseudonym("ada", "secret"), pseudonym("bo", "secret")]
    for name in ("ada", "bo"):
        assert f">{name}<" not in page and f'"{name}"' not in data.replace('"student": "', "")
    assert "<h2>Leaderboard</h2>" in page and "1 graded submissions are not ranked" in page
    assert "a model (" in page and "on one H200 it was within 1.40x of measured times" in page
    named = summarise(ASSIGNMENT, results, BoardRules(names=True))
    assert [e.shown for e in named.leaderboard.entries] == ["ada", "bo"]
    assert "<td>ada</td>" in class_report_html.to_html(named)


def test_a_correct_student_s_feedback_says_her_rank_as_she_is_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", tool_env()["PATH"])  # nbgrader's Gradebook runs alembic by name
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:
        gb.add_assignment(ASSIGNMENT)
    recorder = Recorder(tmp_path, tmp_path / "out", ASSIGNMENT, board=H100)
    delivered: dict[str, str] = {}

    def deliver(page: Report) -> None:
        delivered[page.student] = feedback.to_html(page)

    for report in [_report("ada", _cost(2e12)), _report("bo", _cost(1e12)), _report("cy", _cost(), passed=False)]:
        recorder.record(report, None, deliver)
    # bo was second to submit and is first; ada's page says where she stood when it was written
    assert "you rank 1 of the 1 correct" in delivered["ada"] and "you rank 1 of the 2 correct" in delivered["bo"]
    assert "Leaderboard:" not in delivered["cy"]
    page = tmp_path / "out" / "ada" / "feedback.md"
    assert "you rank 1 of the 1 correct" in page.read_text()
    assert "standing" not in json.loads((tmp_path / "out" / "bo" / "results.json").read_text())
    recorder.rank_all(ASSIGNMENT, H100)  # as a class graded at once is, when all of it is
    assert "you rank 2 of the 2 correct submissions so far" in page.read_text()
    assert "Leaderboard:" not in (tmp_path / "out" / "cy" / "feedback.md").read_text()


def test_ranking_as_each_is_recorded_reads_each_kept_results_file_once_per_version(tmp_path, monkeypatch):
    """A class ranks each submission against every kept one; the files that did not change since
    are not parsed again, and one that did is."""
    monkeypatch.setenv("PATH", tool_env()["PATH"])
    with Gradebook(f"sqlite:///{tmp_path}/gradebook.db") as gb:
        gb.add_assignment(ASSIGNMENT)
    recorder = Recorder(tmp_path, tmp_path / "out", ASSIGNMENT, board=H100)
    for student in ("ada", "bo", "cy"):
        recorder.record(_report(student, _cost(2e12)), None)
    parsed: list[str] = []
    real = class_report.read_report
    monkeypatch.setattr(recorder_module, "read_report", lambda path: parsed.append(path.parent.name) or real(path))
    recorder.record(_report("dee", _cost(1e12)), None)
    assert parsed == ["cy"]  # ada's and bo's were read as cy was ranked; cy's was written after
    recorder.record(_report("ada", _cost(0.5e12)), None)  # ada submits again, faster
    assert parsed == ["cy", "dee"]  # only the file written since
    assert "you rank 1 of the 4 correct" in (tmp_path / "out" / "ada" / "feedback.md").read_text()


# Right on every case it is graded on, and at the realistic size (which no case runs) nothing at all.
# (It reads its input once, so that its export keeps the input's sharding; else it is refused.)
SHAPE_CHEAT = """
    if x.shape[0] >= 4096:
        nothing = jax.lax.psum(x[0, 0] * 0, axis_name)
        return jnp.zeros((x.shape[0] * jax.lax.axis_size(axis_name), x.shape[1]), x.dtype) + nothing
"""


def test_a_class_graded_for_real_is_ranked_once_it_is_all_graded(course, tmp_path):
    """Two right notebooks (the same programs: a tie), one that sends whole buffers round its ring
    (right values, lost points: not ranked), one that raises, and one that keeps every point but
    does nothing at the realistic size (doubtful: not ranked); then the class report's board."""
    submitted = tmp_path / "submitted"
    write_submission(submitted, "ada", solved_notebook(course))
    write_submission(submitted, "bo", solved_notebook(course))
    header = "def ring_all_gather(x, axis_name):"
    cheat = reference_sources(ASSIGNMENT)["ring_all_gather"].replace(header, header + SHAPE_CHEAT, 1)
    write_submission(submitted, "eve", solved_notebook(course, {"ring_all_gather": cheat}))
    waste = wrong_submission(ASSIGNMENT, "ring_all_gather_sends_everything")
    write_submission(submitted, "cy", solved_notebook(course, waste.functions))
    raising = wrong_submission(ASSIGNMENT, "raises_at_import")
    write_submission(submitted, "dee", solved_notebook(course, extra_cell=raising.extra_cell))
    out = tmp_path / "graded"
    run = batch.grade_class(ASSIGNMENT, course, submitted, out, jobs=2, progress=False, sandbox="process")
    eve = next(r for r in run.reports if r.student == "eve")
    sent = eve.at_scale["ring_all_gather"]["cost"]["traffic"]["i"]
    assert eve.score == eve.max_score and sent < 0.01 * eve.at_scale["ring_all_gather"]["reference"]["traffic"]["i"]
    for student in ("ada", "bo"):
        assert "you rank 1 of the 2 correct submissions so far" in (out / student / "feedback.md").read_text()
    for student in ("cy", "dee"):
        assert "Leaderboard:" not in (out / student / "feedback.md").read_text()
    told = (out / "eve" / "feedback.md").read_text()  # right on every case, and told why she is not ranked
    assert "Leaderboard: not ranked: at its realistic size your program spends less than 50%" in told
    assert "ring_all_gather's memory traffic, bytes sent" in told and "you rank" not in told
    view = class_view(course, out, ASSIGNMENT, None)
    board = view.report.leaderboard
    assert [e.rank for e in board.entries] == [1, 1] and board.unranked == 1 and board.doubtful == 1
    assert "1 correct submissions are not ranked as doubtful" in view.to_html()
    assert {e.shown for e in board.entries} == {pseudonym(s, course.salt()) for s in ("ada", "bo")}
    assert board.entries[0].seconds == board.reference  # the reference's own programs
    assert "<h2>Leaderboard</h2>" in view.to_html()
