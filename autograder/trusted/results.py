"""The runner's results, read on the trusted side: size-capped, never through a link, never
pickled, every field checked against ``core/protocol.py`` before anything reads it."""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..core import files
from ..core.errors import JaxcourseError
from ..core.protocol import (
    ARTIFACTS,
    MAX_ARTIFACTS_BYTES,
    MAX_MESSAGE,
    MAX_PROFILE_PHASES,
    MAX_RESULTS_BYTES,
    RESULTS,
    TEST_STATUSES,
    VERSION,
    Results,
)

_ARTIFACT_NAME = re.compile(r"^\d{3}$")
_ARTIFACT_MEMBER = re.compile(r"^\d{3}\.npy$")


class ResultsError(JaxcourseError):
    """The runner's results are too big or malformed."""


class NoResults(ResultsError):
    """No results at all: the runner died before writing them, rather than writing nonsense."""


def read_results(
    out: Path, test_ids: set[str], artifacts_dir: Path, names: tuple[str, str] = (RESULTS, ARTIFACTS)
) -> Results:
    """Load and validate what the runner left in ``out`` (``names``: one phase's results and
    artifacts files). Exported artifacts are copied out of the artifacts file into
    ``artifacts_dir`` (the grader's own directory) and named there by path. The sandbox's own
    words (messages) are cut to ``MAX_MESSAGE`` characters."""
    results_name, artifacts_name = names
    results = _load_json(read_regular(out / results_name, MAX_RESULTS_BYTES, "results"))
    _expect(isinstance(results, dict) and results.get("version") == VERSION, "unknown results version")
    extra = set(results) - {"version", "notebook", "meshes", "tests", "profile"}
    _expect(not extra, f"unexpected fields {', '.join(sorted(map(str, extra)))[:80]}")
    notebook = results.get("notebook")
    _expect(isinstance(notebook, dict) and _one_of(notebook.get("status"), ("ok", "error")), "bad notebook status")
    _expect(isinstance(notebook.get("message"), str), "bad notebook message")
    notebook["message"] = notebook["message"][:MAX_MESSAGE]
    _expect(isinstance(results.get("meshes"), dict), "bad mesh signatures")
    tests = results.get("tests")
    _expect(isinstance(tests, dict) and set(tests) <= test_ids, "results for tests never asked for")
    _check_profile(results.get("profile", {"entered_at": 0.0, "seconds": {}}))
    artifacts = _artifacts(out / artifacts_name) if os.path.lexists(out / artifacts_name) else {}
    for test_id, test in tests.items():
        _check_test(test_id, test, artifacts)
        if test["status"] == "exported":
            path = artifacts_dir / f"{test['artifact']}.jaxexport"
            path.write_bytes(artifacts[test["artifact"]])
            test["artifact"] = str(path)
    return cast(Results, results)  # every field checked above


def read_regular(path: Path, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes of a regular file of the runner's, never through a link (the
    sandbox may have planted one pointing anywhere on the host) and never blocking on a pipe."""
    try:
        return files.read_regular(path, limit)
    except FileNotFoundError:
        raise NoResults(f"the runner wrote no {what}") from None
    except files.NotRegular:
        raise ResultsError(f"the runner's {what} is not a regular file") from None
    except files.TooLarge as err:
        raise ResultsError(
            f"the runner's {what} are larger than allowed ({err.size} bytes; the limit is {limit})"
        ) from None


def _load_json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ResultsError("the runner's results are not valid JSON") from None


def _artifacts(path: Path) -> dict[str, bytes]:
    """The byte arrays of ``artifacts.npz``: stored (never compressed) members with checked names
    and sizes, loaded without pickle."""
    data = read_regular(path, MAX_ARTIFACTS_BYTES, "artifacts")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.infolist():
                _expect(bool(_ARTIFACT_MEMBER.match(member.filename)), f"bad artifact name {member.filename[:40]!r}")
                _expect(member.compress_type == zipfile.ZIP_STORED, "compressed artifacts")
            loaded = np.load(io.BytesIO(data), allow_pickle=False)
            arrays = {name: loaded[name] for name in loaded.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
        raise ResultsError(f"malformed results: artifacts.npz cannot be read ({type(err).__name__})") from None
    for name, array in arrays.items():
        _expect(array.dtype == np.uint8 and array.ndim == 1, f"artifact {name} is not a byte array")
    return {name: array.tobytes() for name, array in arrays.items()}


def _check_test(test_id: str, test: Any, artifacts: dict[str, bytes]) -> None:
    _expect(isinstance(test, dict) and _one_of(test.get("status"), TEST_STATUSES), f"bad status for {test_id}")
    _expect(isinstance(test.get("message", ""), str), f"bad message for {test_id}")
    if "message" in test:
        test["message"] = test["message"][:MAX_MESSAGE]
    varying = test.get("varying", [])
    ok = isinstance(varying, list) and len(varying) <= 8 and all(isinstance(a, str) and len(a) <= 64 for a in varying)
    _expect(ok, f"bad varying axes for {test_id}")
    if test["status"] == "exported":
        name = test.get("artifact")
        _expect(isinstance(name, str) and bool(_ARTIFACT_NAME.match(name)), f"bad artifact for {test_id}")
        _expect(name in artifacts, f"missing artifact for {test_id}")
    if test["status"] == "value":
        result = test.get("result")
        ok = isinstance(result, dict) and (
            set(result) == {"value"}
            or (set(result) == {"raises", "message"} and all(isinstance(result[k], str) for k in result))
        )
        _expect(ok, f"bad value for {test_id}")
        if "raises" in result:
            result["raises"], result["message"] = result["raises"][:80], result["message"][:MAX_MESSAGE]


def _check_profile(profile: Any) -> None:
    """Timings only: finite non-negative numbers under short names, a bounded number of them."""
    ok = isinstance(profile, dict) and set(profile) == {"entered_at", "seconds"} and _seconds(profile["entered_at"])
    seconds: Any = profile["seconds"] if ok else None
    ok = isinstance(seconds, dict) and len(seconds) <= MAX_PROFILE_PHASES
    _expect(ok and all(isinstance(k, str) and len(k) <= 80 and _seconds(v) for k, v in seconds.items()), "bad profile")


def _seconds(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf")


def _one_of(value: Any, allowed: Collection[str]) -> bool:
    """Whether ``value`` is one of the ``allowed`` words (a list or a mapping is not hashable: never
    ask a set whether it holds one)."""
    return isinstance(value, str) and value in allowed


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ResultsError(f"malformed results: {message}")
