"""Verdicts from measurements: values first, then the technique (collectives, neighbours, the
resource signature within loose bounds of the reference's), then each tight part, with reasons."""

from __future__ import annotations

from dataclasses import replace

from autograder.grading.reports.reasons import kind_of
from autograder.specs import get

from ..helpers import verdicts

TASK = get("01_collectives").task("ring_all_gather")
CASE_8, CASE_24 = TASK.cases
HIDDEN = replace(CASE_24, axis="x", hidden=True)
ATTENTION = get("05_transformer_parallel").task("ring_attention")
STEP = get("05_transformer_parallel").task("explicit_step")


def _signature(sent=168.0, flops=0.0, peak=1000, resident=96, axis="i"):
    return {"flops": flops, "peak": peak, "traffic": None if sent is None else {axis: sent}, "resident": resident}


def _m(ok=True, counts=None, asked=None, hops=1, message="wrong values on 3 of 8 devices", reference=None, **mine):
    """A measured case: its census and its signature (``mine``: ``_signature``'s arguments) beside
    the reference's (``reference``: the same, defaults unless given)."""
    counts = {"collective-permute": 7} if counts is None else counts
    signature = _signature(**mine)
    sent = None if signature["traffic"] is None else sum(signature["traffic"].values())
    census = {
        "counts": counts,
        "values_per_device": sent and sent / 4,
        "bytes_per_device": sent,
        "program_bytes": sent,
        "unbounded": [] if sent is not None else ["ppermute"],
        "farthest_hops": hops,
        "link_values_per_device": sent and sent / 4 * hops,
    }
    theirs = _signature(**(reference or {}))
    return {
        "values": {"ok": ok, "message": "" if ok else message},
        "asked": asked if asked is not None else counts,
        "census": census,
        "signature": signature,
        "reference_census": {**census, "link_values_per_device": 42, "program_bytes": 168},
        "reference_signature": theirs,
        "matmul_waits": list(range(8)),  # an overlapped ring's: the matmul of step s waits for s transfers
    }


def _scores(measured, task=TASK, assignment="01_collectives"):
    return verdicts.scores(assignment, task, measured)


def test_all_right():
    scores = _scores([(CASE_8, _m()), (CASE_24, _m(axis="y", reference={"axis": "y"})), (HIDDEN, _m())])
    assert {k: v[0] for k, v in scores.items()} == TASK.points
    assert scores["communication"][1] == "against the reference's on the same mesh: bytes sent 1.00x, 1.00x"


def test_structure_needs_a_correct_case_first():
    scores = _scores([(CASE_8, _m(ok=False, counts={})), (CASE_24, _m(ok=False, counts={}))])
    assert scores["values"][0] == 0 and "wrong values on 3 of 8 devices" in scores["values"][1]
    assert "1 more of 2 cases" in scores["values"][1]
    assert scores["technique"] == (0, "not checked until the values are right on at least one case")
    assert scores["communication"][0] == 0
    assert "hidden values" not in scores  # no hidden cases were run: no hidden test is reported


def test_forbidden_collective_is_named_with_its_jax_name():
    scores = _scores([(CASE_8, _m(counts={"all-gather": 1})), (CASE_24, _m())])
    assert scores["technique"][0] == 0
    assert (
        "the compiled HLO contains all-gather (all_gather); ring_all_gather may use only ppermute"
        in scores["technique"][1]
    )
    assert "mesh 8:i" in scores["technique"][1]
    assert scores["communication"] == (0, "not checked until the technique holds (see the technique part)")


def test_a_task_that_allows_no_collective_says_so():
    fold = get("01_collectives").task("fold_rng_over_axis")
    scores = _scores([(case, _m(counts={"all-reduce": 1})) for case in fold.cases], task=fold)
    assert scores["technique"][0] == 0
    assert "all-reduce (psum); fold_rng_over_axis may use no collectives" in scores["technique"][1]
    hidden = _scores(
        [
            *((case, _m(counts={})) for case in fold.cases),
            (replace(fold.cases[0], hidden=True), _m(counts={"all-reduce": 1})),
        ],
        task=fold,
    )
    assert hidden["technique"][1].startswith("a hidden case: it runs collectives, and fold_rng_over_axis may use none;")
    assert kind_of(hidden["technique"][1]) == "forbidden collective: unnamed"


def test_a_collective_asked_for_but_compiled_away_still_counts():
    scores = _scores([(CASE_8, _m(asked={"all-reduce": 1, "collective-permute": 7})), (CASE_24, _m())])
    assert "the program asks for all-reduce (psum)" in scores["technique"][1]


def test_a_ring_that_skips_its_neighbours_is_not_the_technique():
    scores = _scores([(CASE_8, _m(hops=4)), (CASE_24, _m())])
    assert (
        scores["technique"][0] == 0 and "not its neighbours: a ppermute pair is 4 hops apart" in scores["technique"][1]
    )


def test_sending_twice_is_still_a_ring_but_loses_communication():
    """2x the reference's bytes is within the technique's 3x, past communication's 1x."""
    scores = _scores([(CASE_8, _m(sent=336.0)), (CASE_24, _m())])
    assert scores["technique"][0] == TASK.points["technique"]
    assert scores["communication"][0] == 0
    assert (
        "sends 2.00x the reference's bytes per device over 'i' (336 against 168 on the same mesh; at most 1x)"
        in (scores["communication"][1])
    )
    assert "the least it can send is 168 bytes" in scores["communication"][1]  # the closed form, 7 x 6 floats


def test_sending_whole_arrays_is_another_algorithm():
    scores = _scores([(CASE_8, _m(sent=8 * 168.0)), (CASE_24, _m())])
    assert scores["technique"][0] == 0 and "sends 8.00x the reference's bytes" in scores["technique"][1]
    assert "not checked until the technique holds" in scores["communication"][1]


def test_traffic_over_an_axis_where_the_reference_sends_nothing_fails():
    mine = _m()
    mine["signature"]["traffic"] = {"i": 168.0, "x": 8.0}
    scores = _scores([(CASE_8, mine), (CASE_24, _m())])
    assert "sends 8 bytes per device over 'x', where the reference sends none" in scores["technique"][1]


def test_loops_of_unknown_length_cannot_be_bounded():
    scores = _scores([(CASE_8, _m(sent=None)), (CASE_24, _m())])
    assert scores["technique"][0] == 0 and "trip count XLA cannot determine" in scores["technique"][1]


def test_the_dimension_furthest_past_its_bound_is_the_one_said():
    """Peak 3x against a bound of 1.5, FLOPs 1.6x against 1.5: the peak is what to fix first."""
    case = ATTENTION.cases[0]
    m = _m(flops=1.6e4, peak=3000, reference={"flops": 1e4, "peak": 1000}, sent=100.0, axis="i")
    m["reference_signature"]["traffic"] = {"i": 100.0}
    scores = _scores([(case, m)], ATTENTION, "05_transformer_parallel")
    technique = scores["technique"][1]
    assert (
        technique.startswith(case.label()) and "needs 3.00x the reference's memory per device at its peak" in technique
    )
    assert "ring attention holds one block of keys and values at a time" in technique


def test_a_hidden_case_says_what_went_wrong_and_nothing_of_the_case():
    hidden = replace(ATTENTION.cases[0], hidden=True, shapes=((128, 8),) * 3)
    right = _m(flops=1e4, peak=1000, reference={"flops": 1e4, "peak": 1000}, sent=100.0)
    wrong = _m(flops=1e4, peak=4000, reference={"flops": 1e4, "peak": 1000}, sent=100.0)
    right["reference_signature"]["traffic"] = wrong["reference_signature"]["traffic"] = {"i": 100.0}
    scores = _scores([(ATTENTION.cases[0], right), (hidden, wrong)], ATTENTION, "05_transformer_parallel")
    message = scores["technique"][1]
    assert message.startswith("a hidden case: it needs more than 1.5x the reference's memory per device at its peak")
    assert "128" not in message and "4000" not in message and "4,000" not in message


def test_the_technique_part_shows_the_signature_beside_the_reference():
    m = _m(flops=1.2e4, peak=1100, reference={"flops": 1e4, "peak": 1000}, sent=100.0)
    m["reference_signature"]["traffic"] = {"i": 100.0}
    results = verdicts.results("05_transformer_parallel", ATTENTION, [(ATTENTION.cases[0], m)])
    table = next(r.signature for r in results if r.name.endswith(": technique"))
    assert table and table["case"] == ATTENTION.cases[0].label()
    rows = {row["dimension"]: row for row in table["rows"]}
    assert rows["FLOPs of matmuls"] == {
        "dimension": "FLOPs of matmuls",
        "yours": 1.2e4,
        "reference": 1e4,
        "bounds": {"technique": 1.5},
    }
    assert rows["bytes sent over 'i'"]["bounds"] == {"technique": 1.5, "communication": 1.0}
    assert all(r.signature is None for r in results if not r.name.endswith(": technique"))


def test_a_step_holding_a_leaf_whole_names_it_and_is_not_the_technique():
    case = STEP.cases[0]
    leaves = [("params/w1", 512, 512), ("params/w2", 64, 512)]
    mine = _m(resident=576, reference={"resident": 128}, flops=1.0, sent=1.0)
    mine["reference_signature"]["flops"] = 1.0
    mine["memory"], mine["reference_memory"] = leaves, [("params/w1", 64, 512), ("params/w2", 64, 512)]
    scores = _scores([(case, mine)], STEP, "05_transformer_parallel")
    assert scores["technique"][0] == 0
    assert (
        "params/w1 is held whole on every device (512 bytes per device); the reference keeps 1/8 of it"
        in (scores["technique"][1])
    )
    assert (
        scores["memory"][1]
        == scores["peak memory"][1]
        == "not checked until the technique holds (see the technique part)"
    )
