"""Verdicts from measurements: values first, then collectives and traffic, with reasons."""

from __future__ import annotations

from dataclasses import replace

from autograder.specs import get

from ..helpers import verdicts

TASK = get("01_collectives").task("ring_all_gather")
CASE_8, CASE_24 = TASK.cases
HIDDEN = replace(CASE_24, axis="x", hidden=True)


def _m(ok=True, counts=None, values=None, asked=None, message="wrong values on 3 of 8 devices"):
    counts = {"collective-permute": 7} if counts is None else counts
    return {
        "values": {"ok": ok, "message": "" if ok else message},
        "asked": asked if asked is not None else counts,
        "census": {"counts": counts, "values_per_device": values, "bytes_per_device": values and values * 4,
                   "unbounded": [] if values is not None else ["ppermute"]},
    }  # fmt: skip


def _scores(measured):
    return verdicts.scores("01_collectives", TASK, measured)


def test_all_right():
    scores = _scores([(CASE_8, _m(values=42)), (CASE_24, _m(values=36)), (HIDDEN, _m(values=12))])
    assert {k: v[0] for k, v in scores.items()} == TASK.points


def test_structure_needs_a_correct_case_first():
    scores = _scores([(CASE_8, _m(ok=False, values=0, counts={})), (CASE_24, _m(ok=False, values=0, counts={}))])
    assert scores["values"][0] == 0 and "wrong values on 3 of 8 devices" in scores["values"][1]
    assert "1 more of 2 cases" in scores["values"][1]
    assert scores["collectives"] == (0, "not checked until the values are right on at least one case")
    assert scores["communication"][0] == 0
    assert "hidden values" not in scores  # no hidden cases were run: no hidden test is reported


def test_forbidden_collective_is_named_with_its_jax_name():
    scores = _scores([(CASE_8, _m(counts={"all-gather": 1}, values=42)), (CASE_24, _m(values=36))])
    assert scores["collectives"][0] == 0
    assert (
        "the compiled HLO contains all-gather (all_gather); ring_all_gather may use only ppermute"
        in scores["collectives"][1]
    )
    assert "mesh 8:i" in scores["collectives"][1]


def test_a_collective_asked_for_but_compiled_away_still_counts():
    scores = _scores(
        [(CASE_8, _m(values=42, asked={"all-reduce": 1, "collective-permute": 7})), (CASE_24, _m(values=36))]
    )
    assert "the program asks for all-reduce (psum)" in scores["collectives"][1]


def test_traffic_over_the_minimum_fails_with_the_figures():
    scores = _scores([(CASE_8, _m(values=84)), (CASE_24, _m(values=36))])
    assert scores["communication"][0] == 0
    assert "sends 84 values (336 bytes) per device; the minimum is 42 values" in scores["communication"][1]


def test_loops_of_unknown_length_cannot_be_bounded():
    scores = _scores([(CASE_8, _m(values=None)), (CASE_24, _m(values=36))])
    assert "trip count XLA cannot determine" in scores["communication"][1]
