"""Whatever the untrusted runner writes is size-capped and validated before it is read: JSON and
one ``.npz`` of byte arrays, nothing that could be unpickled, no links, no pipes."""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.core.protocol import MAX_RESULTS_BYTES
from autograder.trusted.results import NoResults, ResultsError, read_results
from autograder.untrusted.runner import write_results

from ..helpers.fuzz import JSON, damaged

IDS = {"ring_all_gather/0", "local_shape/0"}
EXPORTED = {"ring_all_gather/0": {"status": "exported", "artifact": "000"}}


def _write(out, results, artifacts=None):
    out.mkdir(exist_ok=True)
    if isinstance(results, str):
        (out / "results.json").write_text(results)
    else:
        write_results(out, results, artifacts or {})
    return out


def _ok(**tests):
    return {"version": 1, "notebook": {"status": "ok", "message": ""}, "meshes": {}, "tests": tests}


def test_artifacts_come_out_of_the_npz_into_the_graders_directory(tmp_path):
    results = _ok(**EXPORTED, **{"local_shape/0": {"status": "value", "result": {"value": [2, 3]}}})
    out = _write(tmp_path / "out", results, {"000": b"\x00exported program\xff"})
    (tmp_path / "mine").mkdir()
    got = read_results(out, IDS, tmp_path / "mine")
    path = tmp_path / "mine" / "000.jaxexport"
    assert got["tests"]["ring_all_gather/0"]["artifact"] == str(path)
    assert path.read_bytes() == b"\x00exported program\xff"


@pytest.mark.parametrize(
    "results, why",
    [
        ("{not json", "not valid JSON"),
        ({"version": 2}, "unknown results version"),
        ({**_ok(), "score": 50}, "unexpected fields score"),
        (_ok(**{"other/0": {"status": "value", "result": {"value": 1}}}), "never asked for"),
        (_ok(**{"local_shape/0": {"status": "passed"}}), "bad status"),
        (_ok(**{"ring_all_gather/0": {"status": "exported", "artifact": "../../etc/passwd"}}), "bad artifact"),
        (_ok(**{"ring_all_gather/0": {"status": "exported", "artifact": "001"}}), "missing artifact"),
        (_ok(**{"local_shape/0": {"status": "value", "result": {"value": 1, "score": 5}}}), "bad value"),
        ({**_ok(), "notebook": {"status": "graded", "message": ""}}, "bad notebook status"),
        # The runner's timings are shown, never scored on; still only short names and numbers.
        ({**_ok(), "profile": {"entered_at": 1.0, "seconds": {"run the cells": "fast"}}}, "bad profile"),
        ({**_ok(), "profile": {"entered_at": 1.0, "seconds": {"x" * 81: 1.0}}}, "bad profile"),
        ({**_ok(), "profile": {"entered_at": 1.0, "seconds": {f"p{i}": 1.0 for i in range(65)}}}, "bad profile"),
        ({**_ok(), "profile": {"entered_at": -1.0, "seconds": {}}}, "bad profile"),
        ({**_ok(), "profile": {"entered_at": 1.0, "seconds": {}, "score": 50}}, "bad profile"),
    ],
)
def test_malformed_results_are_refused(tmp_path, results, why):
    with pytest.raises(ResultsError, match=why):
        read_results(_write(tmp_path / "out", results), IDS, tmp_path)


def test_missing_and_oversized_results_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoResults, match="wrote no results"):
        read_results(tmp_path / "empty", IDS, tmp_path)
    out = _write(tmp_path / "big", " " * (MAX_RESULTS_BYTES + 1))
    with pytest.raises(ResultsError, match="larger than allowed"):
        read_results(out, IDS, tmp_path)


def test_links_and_pipes_are_never_followed(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(_ok()))
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "results.json").symlink_to(secret)
    with pytest.raises(ResultsError, match="not a regular file"):
        read_results(linked, IDS, tmp_path)
    piped = tmp_path / "piped"
    piped.mkdir()
    os.mkfifo(piped / "results.json")  # reading it would block the grader forever
    with pytest.raises(ResultsError, match="not a regular file"):
        read_results(piped, IDS, tmp_path)


def _npz(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "members, compression, why",
    [
        ({"000.npy": _npy(np.array([{"pickled": "object"}], dtype=object))}, zipfile.ZIP_STORED, "cannot be read"),
        ({"000.npy": _npy(np.zeros(4, np.float32))}, zipfile.ZIP_STORED, "not a byte array"),
        ({"../000.npy": _npy(np.zeros(4, np.uint8))}, zipfile.ZIP_STORED, "bad artifact name"),
        ({"000.npy": _npy(np.zeros(1 << 20, np.uint8))}, zipfile.ZIP_DEFLATED, "compressed artifacts"),
        ({}, zipfile.ZIP_STORED, "missing artifact"),
    ],
    ids=["pickle", "not-bytes", "name", "zip-bomb", "absent"],
)
def test_artifacts_are_byte_arrays_and_nothing_else(tmp_path, members, compression, why):
    out = _write(tmp_path / "out", _ok(**EXPORTED))
    (out / "artifacts.npz").write_bytes(_npz(members, compression))
    with pytest.raises(ResultsError, match=why):
        read_results(out, IDS, tmp_path)


# A results file as the runner writes it: one exported program, one value, one failure, timings.
WRITTEN = {
    **_ok(
        **EXPORTED,
        **{"local_shape/0": {"status": "value", "result": {"value": [2, 3]}, "varying": ["x"]}},
    ),
    "meshes": {"8:x": {"shape": [8], "axis_names": ["x"]}},
    "profile": {"entered_at": 1.0, "seconds": {"run the cells": 0.5}},
}


def _read_or_refuse(tmp_path, data: bytes) -> None:
    """``read_results`` on ``data`` (with a good artifacts file) returns results whose every field
    the grader reads has its type, or raises ``ResultsError``: never anything else."""
    with tempfile.TemporaryDirectory(dir=tmp_path) as work:
        out = Path(work) / "out"
        out.mkdir()
        (out / "results.json").write_bytes(data)
        (out / "artifacts.npz").write_bytes(_npz({"000.npy": _npy(np.zeros(4, np.uint8))}))
        try:
            got = read_results(out, IDS, Path(work))
        except ResultsError:
            return
    assert got["notebook"]["status"] in {"ok", "error"} and isinstance(got["notebook"]["message"], str)
    assert isinstance(got["meshes"], dict) and set(got["tests"]) <= IDS
    for test in got["tests"].values():
        assert isinstance(test.get("message", ""), str) and isinstance(test.get("varying", []), list)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=JSON | damaged(WRITTEN))
def test_any_json_reads_as_results_or_a_results_error(tmp_path, document):
    _read_or_refuse(tmp_path, json.dumps(document).encode())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=500))
def test_any_bytes_read_as_results_or_a_results_error(tmp_path, data):
    _read_or_refuse(tmp_path, data)
