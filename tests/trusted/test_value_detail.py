"""Wrong values that point somewhere: a wrong array's verdict keeps its one-line message and gains
a ``detail``, where the first wrong device's piece first differs (in the piece and in the whole
array) and the error's pattern (one offset everywhere, growing along a dimension, some rows or
device blocks right), with expected values beside the returned ones only in a student's own
check, whose inputs are unsalted: a grading's expected values stay secret."""

from __future__ import annotations

from dataclasses import replace

import jax
import numpy as np

from autograder.core.course import Course
from autograder.core.mesh import MeshSpec
from autograder.core.records import TestResult as Result
from autograder.grading.pipeline.grader import DEFAULT_TEST_TIMEOUT, provider_for
from autograder.grading.pipeline.plan import plan
from autograder.grading.pipeline.references import ensure
from autograder.grading.pipeline.trusted_worker import evaluation
from autograder.grading.reports.feedback import markdown, to_html
from autograder.grading.student.self_check import find_task, judge
from autograder.grading.submission.report import Report
from autograder.specs import get
from autograder.trusted import reference as records
from autograder.trusted.judges import JUDGES
from autograder.trusted.measure import compare_values
from autograder.trusted.verdict import score
from autograder.untrusted.runner import run_test

from ..helpers.course import REPO, reference_sources
from ..helpers.submissions import wrong_submission

TOLERANCE = (1e-4, 1e-4)


def _no_rescale():
    """Ring attention that never rescales what it has summed (a wrong submission's), with the
    names its notebook gives it."""
    namespace = {"jax": jax, "jnp": jax.numpy}
    exec("\n".join(reference_sources("05_transformer_parallel").values()), namespace)
    exec(
        wrong_submission("05_transformer_parallel", "ring_attention_no_rescale").functions["ring_attention"], namespace
    )
    return namespace["ring_attention"]


def _expected(shape=(32, 8)) -> np.ndarray:
    return np.random.default_rng(0).normal(size=shape).astype(np.float32)


def _verdict(returned: np.ndarray, expected: np.ndarray, sample: bool = False, spec=("i",)):
    mesh = MeshSpec.parse("8:i").build()
    out = jax.device_put(returned.astype(np.float32), jax.NamedSharding(mesh, jax.P(*spec)))
    return compare_values(out, expected, "float32", TOLERANCE, mesh, sample)


def _detail(returned: np.ndarray, expected: np.ndarray, sample: bool = False, spec=("i",)) -> str:
    verdict = _verdict(returned, expected, sample, spec)
    assert not verdict["ok"]
    return verdict["detail"]


def test_right_values_have_no_detail_and_wrong_ones_keep_their_message():
    expected = _expected()
    assert _verdict(expected.copy(), expected) == {"ok": True, "message": ""}
    verdict = _verdict(expected + 0.5, expected)
    assert verdict["message"].startswith("wrong values on 8 of 8 devices: ")
    assert "\n" not in verdict["message"] and "detail" in verdict


def test_one_offset_everywhere_is_said_as_one():
    expected = _expected()
    detail = _detail(expected + 0.5, expected)
    assert "every value is off by about +0.5 (returned minus expected)" in detail
    assert len(detail.splitlines()) == 2  # where, and the pattern: no sample unless asked


def test_one_factor_everywhere_is_said_as_one():
    expected = _expected()
    assert "every value is about 8 times the expected one" in _detail(expected * 8, expected)


def test_an_error_that_grows_along_the_rows_says_so():
    expected = _expected()
    rows = np.arange(32)[:, None]
    signs = np.where(np.random.default_rng(1).random((32, 8)) < 0.5, -1, 1)
    detail = _detail(expected + signs * 0.01 * (rows + 1), expected)
    assert "the error grows along the rows: on average 0.045 in rows 0-7, 0.285 in 24-31 of 32" in detail
    assert "columns" not in detail


def test_an_error_that_grows_along_the_columns_is_found_there():
    expected = _expected((8, 32))
    cols = np.arange(32)[None, :]
    signs = np.where(np.random.default_rng(1).random((8, 32)) < 0.5, -1, 1)
    detail = _detail(expected + signs * 0.01 * (cols + 1), expected)
    assert "the error grows along the columns" in detail and "along the rows" not in detail


def test_right_rows_and_wrong_rows_are_named():
    expected = _expected()
    returned = expected.copy()
    returned[4:] += np.random.default_rng(2).normal(size=(28, 8)).astype(np.float32)
    detail = _detail(returned, expected)
    assert "rows 0-3 of 32 right, 4-31 wrong" in detail
    # The first wrong device holds rows 4-7: its piece's row 0 is the whole's row 4.
    assert detail.splitlines()[0] == "first differs at [0, 0] of cpu:1's piece (4, 8), [4, 0] of the whole (32, 8)"


def test_right_device_blocks_are_named_when_rows_in_the_others_are_right_here_and_there():
    expected = _expected()
    returned = expected.copy()
    wrong = np.zeros(32, bool)
    wrong[[9, 11, 14, 17, 18, 22, 25, 28, 31]] = True  # scattered, none in rows 0-7 (devices 0 and 1)
    returned[wrong] += 1.0 + np.random.default_rng(3).random((int(wrong.sum()), 8)).astype(np.float32)
    detail = _detail(returned, expected)
    assert "rows 0-7 of 32 right, 8-31 hold wrong values (in blocks of 4, as the devices hold them)" in detail


def test_the_first_difference_is_placed_in_the_piece_and_in_the_whole():
    expected = _expected()
    returned = expected.copy()
    returned[13, 5] += 1.0
    returned[30, 2] -= 2.0
    lines = _detail(returned, expected).splitlines()
    assert lines[0] == "first differs at [1, 5] of cpu:3's piece (4, 8), [13, 5] of the whole (32, 8)"
    assert "rows 13, 30 of 32 wrong, the other 30 right" in lines[1]
    # Split along the columns instead: device 2 holds columns 2; its first wrong value is row 30.
    lines = _detail(returned, expected, spec=(None, "i")).splitlines()
    assert lines[0] == "first differs at [30, 0] of cpu:2's piece (32, 1), [30, 2] of the whole (32, 8)"


def test_a_replicated_output_is_placed_in_the_whole():
    expected = _expected((4, 8))
    returned = expected.copy()
    returned[2, 3] = np.nan
    lines = _detail(returned, expected, spec=()).splitlines()
    assert lines[0] == "first differs at [2, 3] of the whole (4, 8), on cpu:0"
    assert lines[1] == "1 of 32 returned values are NaN or infinite (the first at [2, 3])"


def test_expected_values_are_shown_only_when_asked():
    expected = _expected()
    returned = expected.copy()
    returned[13, 5:] += 1.0
    shown = [f"{v:.4g}" for v in expected[13, 5:8]] + [f"{v:.4g}" for v in expected[14, :1]]
    mine = [f"{v:.4g}" for v in returned[13, 5:8]] + [f"{v:.4g}" for v in returned[14, :1]]
    asked = _detail(returned, expected, sample=True).splitlines()
    assert asked[1] == f"from there on, expected {' '.join(shown)}; returned {' '.join(mine)}"
    plain = _detail(returned, expected)
    assert "expected " not in plain and not any(value in plain for value in shown)


def test_the_values_part_carries_the_detail_of_the_case_its_message_names_never_a_hidden_ones():
    task = get("05_transformer_parallel").task("ring_attention")
    hidden = replace(task.cases[0], hidden=True)

    def wrong(detail: str | None = None):
        values = {"ok": False, "message": "wrong values on 8 of 8 devices" if detail else "failed to run"}
        return {"values": {**values, "detail": detail} if detail else values}

    def parts(measured):
        return {r.name.split(": ")[1]: r for r in score(task, measured)}

    first, second, third = task.cases
    found = parts([(hidden, wrong("hidden's")), (first, wrong("first's")), (second, wrong("second's"))])
    assert found["values"].detail == "first's" and first.label() in found["values"].message
    assert found["hidden values"].detail is None and found["technique"].detail is None
    # The message names the first wrong visible case, which failed to run: no detail of another.
    found = parts([(hidden, wrong("hidden's")), (first, wrong()), (second, wrong("second's")), (third, wrong())])
    assert found["values"].detail is None and "failed to run" in found["values"].message


def test_feedback_shows_a_visible_parts_detail_escaped_and_a_hidden_parts_never():
    seen = Result("f: values", "f", 0, 3, "failed", "wrong values", "visible", detail="rows <0-3> | right\nline 2")
    secret = Result("f: hidden values", "f", 0, 3, "failed", "wrong", "hidden", detail="SECRET 0.123")
    report = Report("05_transformer_parallel", "ada", "graded", "", [seen, secret])
    page, text = to_html(report), markdown(report)
    assert "<pre class='detail'>rows &lt;0-3&gt; | right\nline 2</pre>" in page
    assert "wrong values<br>rows &lt;0-3&gt; &#124; right<br>line 2 |" in text
    assert "SECRET" not in page and "SECRET" not in text


def test_ring_attention_without_the_rescale_points_at_its_rows_in_a_students_check():
    values = judge(_no_rescale()).tests[0]
    assert values.name == "ring_attention: values" and values.status == "failed"
    lines = values.detail.splitlines()
    assert lines[0] == "first differs at [0, 0] of cpu:0's piece (4, 8), [0, 0] of the whole (32, 8)"
    assert lines[1].startswith("from there on, expected ") and "; returned " in lines[1]
    # Unscaled sums are wrong wherever a row's maximum moved after its own block was summed:
    # every row but the two whose maximum sat in their own block.
    assert lines[2] == "rows 8, 24 of 32 right, the other 30 wrong"


def test_ring_attention_without_the_rescale_is_right_on_the_first_block_only_when_causal():
    _, task = find_task("ring_attention")
    causal = next(c for c in task.cases if dict(c.kwargs).get("causal") and c.mesh == "8:i")
    lines = judge(_no_rescale(), cases=[causal]).tests[0].detail.splitlines()
    assert lines[0] == "first differs at [0, 0] of cpu:1's piece (32, 8), [32, 0] of the whole (256, 8)"
    assert lines[2] == "rows 0-31 of 256 right, 32-255 hold wrong values (in blocks of 32, as the devices hold them)"


def test_a_gradings_salted_cases_show_no_expected_value(tmp_path):
    """The grader's own calls (``evaluation`` as grader.py makes it, on salted seeds): the detail
    keeps where and how, and none of the expected values."""
    assignment, task = find_task("ring_attention")
    provider = provider_for(assignment, Course.find(REPO))
    assert provider.salt
    tests = plan(assignment.name, (task,), provider.salt, provider.targets, at_scale=False)
    references = ensure(provider, tests, tmp_path / "references", 8, 300)
    namespace = {"ring_attention": _no_rescale()}
    test = tests[0]
    artifacts: dict[str, bytes] = {}
    result = run_test(
        {"id": test.id, "sig": test.sig, "index": 0, "timeout": DEFAULT_TEST_TIMEOUT}, namespace, artifacts
    )
    assert result["status"] == "exported"
    (tmp_path / "f.jaxexport").write_bytes(artifacts[result["artifact"]])
    entry = evaluation(test, references[test.id], {**result, "artifact": str(tmp_path / "f.jaxexport")})
    assert "sample" not in entry
    verdict = JUDGES[task.kind].measure(entry)["values"]
    detail = verdict["detail"]
    assert not verdict["ok"] and detail.startswith("first differs at ") and len(detail.splitlines()) == 2
    assert "expected" not in detail
    expected = records.load(references[test.id])[1]["value"]
    assert not any(f"{v:.4g}" in detail for v in expected.ravel() if abs(v) > 1e-3)
