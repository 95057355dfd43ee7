"""Every known-wrong submission and every attack says what grading it must produce, in words: a
test that only counts points cannot tell a right reason from a wrong one. The rules are
``tests/helpers/submissions.py``'s; the slow tests grade each file and hold it to what it says."""

from __future__ import annotations

import pytest

from autograder.specs import ASSIGNMENTS as SPECS

from .helpers.course import ASSIGNMENT, full_marks
from .helpers.submissions import (
    CASES,
    SUBMISSIONS,
    WrongSubmission,
    adversarial_cases,
    case_problems,
    submission_problems,
    wrong_submissions,
)

WRONG = [(a, w) for a in sorted(SPECS) for w in wrong_submissions(a)]


def test_every_assignment_has_its_folder_of_wrong_submissions_and_nothing_else():
    assert sorted(p.name for p in SUBMISSIONS.iterdir() if p.name != "__pycache__") == sorted(SPECS)
    for assignment in SPECS:
        assert wrong_submissions(assignment), f"no wrong submissions for {assignment}"
        assert all(p.suffix == ".py" for p in (SUBMISSIONS / assignment).iterdir() if p.is_file())


@pytest.mark.parametrize("assignment, wrong", WRONG, ids=[f"{a}/{w.name}" for a, w in WRONG])
def test_wrong_submission_states_its_reasons(assignment: str, wrong: WrongSubmission):
    assert submission_problems(wrong) == []
    tests = full_marks(assignment)
    assert set(wrong.expected) <= set(tests), "EXPECTED names tests the assignment does not have"
    assert all(0 <= score < tests[name] for name, score in wrong.expected.items()), "each must lose points"
    assert wrong.functions or wrong.extra_cell, "it changes nothing in the reference notebook"
    assert set(wrong.functions) <= {t.name for t in SPECS[assignment].tasks} | _solution_cells(assignment)


@pytest.mark.parametrize("case", adversarial_cases(), ids=lambda c: c.name)
def test_attack_states_what_it_must_produce(case: WrongSubmission):
    assert case_problems(case) == []
    tests = full_marks(ASSIGNMENT)  # every attack is a notebook of 01_collectives
    assert set(case.expected) <= set(tests) and set(case.message_of) <= set(tests)
    assert all(0 <= score < tests[name] for name, score in case.expected.items()), "each must lose points"
    assert case.functions or case.extra_cell, "it changes nothing in the reference notebook"


def test_the_rules_catch_what_they_claim_to(tmp_path):
    """The checks above can fail: each broken file is caught, for its reason."""
    broken = {
        "no_docstring": 'EXPECTED = {"a: values": 0}\nREASONS = {"a: values": "wrong"}\n',
        "no_reasons": '"""doc"""\nEXPECTED = {"a: values": 0}\n',
        "reason_for_another_test": '"""doc"""\nEXPECTED = {"a: values": 0}\nREASONS = {"b: values": "wrong"}\n',
        "empty_reason": '"""doc"""\nEXPECTED = {"a: values": 0}\nREASONS = {"a: values": " "}\n',
        "loses_nothing": '"""doc"""\nEXPECTED = {}\nREASONS = {}\n',
        "status_without_message": '"""doc"""\nSTATUS = "timeout"\n',
        "misspelt": '"""doc"""\nEXPECTED = {"a: values": 0}\nREASONS = {"a: values": "w"}\nREASON = {}\n',
        "honest_says_nothing": '"""doc"""\nHONEST = True\n',
        "honest_not_true": '"""doc"""\nHONEST = 1\nEXPECTED = {}\nREASONS = {}\n',
    }
    for name, text in broken.items():
        (tmp_path / f"{name}.py").write_text(text)
        assert submission_problems(WrongSubmission(tmp_path / f"{name}.py")), name
    attacks = {
        "crash_without_message": '"""doc"""\nSTATUS = ("crashed", "timeout")\n',
        "loses_without_pattern": '"""doc"""\nEXPECTED = {"a: values": 0}\nMESSAGE_OF = {"b: values": "x"}\n',
        "graded_with_message": '"""doc"""\nEXPECTED = {}\nMESSAGE = "anything"\n',
        "says_nothing": '"""doc"""\nEXTRA_CELL = "pass"\n',
    }
    for name, text in attacks.items():
        (tmp_path / f"{name}.py").write_text(text)
        assert case_problems(WrongSubmission(tmp_path / f"{name}.py")), name
    good = '"""doc"""\nEXPECTED = {"a: values": 0}\nREASONS = {"a: values": "wrong"}\n'
    honest = '"""doc"""\nHONEST = True\nEXPECTED = {}\nREASONS = {}\n'
    for name, text in (("good", good), ("honest", honest)):
        (tmp_path / f"{name}.py").write_text(text)
        assert submission_problems(WrongSubmission(tmp_path / f"{name}.py")) == [], name


def test_the_cases_folder_holds_only_cases():
    assert all(p.suffix == ".py" for p in CASES.iterdir() if p.is_file())


def _solution_cells(assignment: str) -> set[str]:
    """Functions a notebook defines in solution cells besides the graded ones (helpers)."""
    from .helpers.course import source_notebook

    return {
        c.metadata["nbgrader"]["grade_id"]
        for c in source_notebook(assignment).cells
        if c.get("metadata", {}).get("nbgrader", {}).get("solution")
    }


# The shortcut each of these takes is the one its part forbids, or another algorithm spelled with
# what the part allows (the built-in collective a ring replaces, a ring that holds every block or
# feigns its overlap, a pipeline that runs the whole model on every device, experts that travel
# instead of tokens, a plan that was not chosen, a step that is not parallel or not sharded at rest,
# steps agreed on without communicating): the slow tests hold each to its EXPECTED, and so it keeps
# at most half the part.
SHORTCUTS = {
    "01_collectives": {
        "uses_all_gather": "ring_all_gather",
        "reduce_scatter_calls_psum_scatter": "ring_reduce_scatter",
        "all_reduce_calls_psum": "ring_all_reduce",
        "layernorm_gathers_rows": "sharded_layernorm",
        "ring_direct_sends": "ring_all_gather",
        "reduce_scatter_sums_whole_arrays": "ring_reduce_scatter",
        "layernorm_sums_rows": "sharded_layernorm",
        "ring_all_gather_sends_everything": "ring_all_gather",
    },
    "02_sharded_matmul": {
        "collective_matmul_calls_all_gather": "collective_matmul_allgather",
        "collective_matmul_calls_psum_scatter": "collective_matmul_reduce_scatter",
        "collective_matmul_gathers_first": "collective_matmul_allgather",
        "collective_matmul_feigns_overlap": "collective_matmul_allgather",
        "collective_matmul_multiplies_first": "collective_matmul_reduce_scatter",
        "collective_matmul_direct_sends": "collective_matmul_allgather",
        "psum_not_reduce_scatter": "matmul_reduce_scatter",
        "reshard_gathers_a": "matmul_reshard",
        "case2_always_gathers": "matmul_case2",
        "case3_always_all_reduces": "matmul_case3",
    },
    "03_multiprocess_training": {"step_gathers_batch": "train_step", "counts_without_communicating": "train"},
    "04_fsdp_tensor_parallel": {
        "dp_tp_step_replicated": "dp_tp_step",
        "fsdp_keeps_full_weights": "fsdp_step",
        "optimizer_state_replicated": "fsdp_step",
        "two_all_reduces_forward": "megatron_mlp",
        "column_parallel_gathers_input": "megatron_mlp",
        "dp_tp_step_psum_gathers_weights": "dp_tp_step",
        "megatron_psum_gathers_weights": "megatron_mlp",
    },
    "05_transformer_parallel": {
        "explicit_step_replicated": "explicit_step",
        "explicit_step_no_fsdp": "explicit_step",
        "explicit_step_tp_only_at_rest": "explicit_step",
        "explicit_step_tp_only_then_copies": "explicit_step",
        "ring_attention_all_gathers": "ring_attention",
        "ring_attention_concatenates_blocks": "ring_attention",
        "ring_attention_keeps_every_block": "ring_attention",
        "ring_attention_feigns_overlap": "ring_attention",
        "ring_attention_direct_sends": "ring_attention",
        "sequence_parallel_psum": "sequence_parallel_block",
        "sequence_parallel_megatron": "sequence_parallel_block",
        "sequence_parallel_gathers_weights": "sequence_parallel_block",
    },
    "06_pipeline_experts": {
        "gpipe_gathers_weights": "gpipe",
        "gpipe_weights_travel": "gpipe",
        "gpipe_data_parallel": "gpipe",
        "gpipe_skips_neighbours": "gpipe",
        "moe_gathers_tokens": "moe_layer",
        "moe_sends_experts": "moe_layer",
        "moe_sends_every_token": "moe_layer",
        "fixed_pipeline_runs_every_stage": "fixed_pipeline",
        "bubble_ignores_chunks": "bubble_fraction",
    },
    "07_inference": {
        "tp_decode_gathers_cache": "tp_decode_step",
        "tp_decode_replicated": "tp_decode_step",
        "tp_decode_not_donated": "tp_decode_step",
        "tp_decode_all_reduce_doubled": "tp_decode_step",
        "split_gathers_cache": "split_cache_decode",
        "split_all_gathers": "split_cache_decode",
        "fixed_decode_unfixed": "fixed_decode_step",
        "fixed_decode_still_copies": "fixed_decode_step",
        "fixed_decode_only_donates": "fixed_decode_step",
        "plan_serving_fastest_replica": "plan_serving",
    },
}
SHORTCUT_PARTS = [(a, name, task) for a, named in SHORTCUTS.items() for name, task in named.items()]


@pytest.mark.parametrize("assignment, name, task", SHORTCUT_PARTS, ids=[f"{a}/{n}" for a, n, _ in SHORTCUT_PARTS])
def test_the_shortcut_a_part_forbids_keeps_at_most_half_of_it(assignment: str, name: str, task: str):
    wrong = next(w for w in wrong_submissions(assignment) if w.name == name)
    assert not wrong.honest, f"{name} is an honest variant, not a shortcut"
    assert _kept(wrong, assignment, task) <= sum(SPECS[assignment].task(task).points.values()) / 2, name


HONEST = [(a, w) for a, w in WRONG if w.honest]


def test_the_library_holds_honest_variants_of_the_techniques_it_grades():
    """Lecture 10's GPipe and ring attention with k and v in one ppermute, at least."""
    assert {
        "05_transformer_parallel/ring_attention_sends_kv_together",
        "06_pipeline_experts/gpipe_scan",
        "07_inference/tp_decode_kv_together",
        "07_inference/split_one_psum",
    } <= {f"{a}/{w.name}" for a, w in HONEST}


@pytest.mark.parametrize("assignment, honest", HONEST, ids=[f"{a}/{w.name}" for a, w in HONEST])
def test_an_honest_variant_keeps_at_least_85_percent_of_each_part_it_writes(assignment: str, honest: WrongSubmission):
    for task in honest.functions:
        full = sum(SPECS[assignment].task(task).points.values())
        assert _kept(honest, assignment, task) >= 0.85 * full, (honest.name, task)


def _kept(wrong: WrongSubmission, assignment: str, task: str) -> float:
    """The points of ``task`` that ``wrong`` keeps, by its EXPECTED."""
    points = SPECS[assignment].task(task).points
    return sum(wrong.expected.get(f"{task}: {part}", full) for part, full in points.items())
