"""Whatever the untrusted runner writes is size-capped and validated before it is read."""

from __future__ import annotations

import json

import pytest

from autograder.protocol import MAX_RESULTS_BYTES, ResultsError, read_results

IDS = {"ring_all_gather/0", "local_shape/0"}


def _write(out, results, artifacts=()):
    out.mkdir(exist_ok=True)
    for name in artifacts:
        (out / name).write_bytes(b"x")
    (out / "results.json").write_text(results if isinstance(results, str) else json.dumps(results))
    return out


def _ok(**tests):
    return {"version": 1, "notebook": {"status": "ok", "message": ""}, "meshes": {}, "tests": tests}


def test_valid_results_get_checked_artifact_paths(tmp_path):
    out = _write(tmp_path / "out", _ok(**{"ring_all_gather/0": {"status": "exported", "artifact": "000.jaxexport"},
                                          "local_shape/0": {"status": "value", "result": {"value": [2, 3]}}}),
                 ["000.jaxexport"])  # fmt: skip
    results = read_results(out, IDS)
    assert results["tests"]["ring_all_gather/0"]["artifact"] == str(out / "000.jaxexport")


@pytest.mark.parametrize(
    "results, why",
    [
        ("{not json", "not valid JSON"),
        ({"version": 2}, "unknown results version"),
        (_ok(**{"other/0": {"status": "value", "result": {"value": 1}}}), "never asked for"),
        (_ok(**{"local_shape/0": {"status": "passed"}}), "bad status"),
        (_ok(**{"ring_all_gather/0": {"status": "exported", "artifact": "../../etc/passwd"}}), "bad artifact"),
        (_ok(**{"ring_all_gather/0": {"status": "exported", "artifact": "001.jaxexport"}}), "missing artifact"),
        (_ok(**{"local_shape/0": {"status": "value", "result": {"value": 1, "score": 5}}}), "bad value"),
        ({**_ok(), "notebook": {"status": "graded", "message": ""}}, "bad notebook status"),
    ],
)
def test_malformed_results_are_refused(tmp_path, results, why):
    with pytest.raises(ResultsError, match=why):
        read_results(_write(tmp_path / "out", results), IDS)


def test_missing_and_oversized_results_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match="wrote no results"):
        read_results(tmp_path / "empty", IDS)
    out = _write(tmp_path / "big", " " * (MAX_RESULTS_BYTES + 1))
    with pytest.raises(ResultsError, match="larger than allowed"):
        read_results(out, IDS)
