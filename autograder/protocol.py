"""The contract between the trusted grader and the untrusted runner: the plan it is handed and
the results it hands back, which are size-capped and validated before anything reads them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .runner import RESULTS

MAX_RESULTS_BYTES = 2 << 20
MAX_ARTIFACTS_BYTES = 64 << 20
_ARTIFACT_NAME = re.compile(r"^\d{3}\.jaxexport$")
_TEST_STATUSES = {"exported", "value", "missing", "error", "timeout"}


class ResultsError(Exception):
    """The runner's results are missing, too big or malformed."""


def write_plan(path: Path, tests: list[dict[str, Any]], num_devices: int, timeout: float) -> None:
    plan = {
        "num_devices": num_devices,
        "tests": [{**t, "index": i, "timeout": timeout} for i, t in enumerate(tests)],
    }
    path.write_text(json.dumps(plan))


def read_results(out: Path, test_ids: set[str]) -> dict[str, Any]:
    """Load and validate ``results.json``; artifact names become checked paths."""
    path = out / RESULTS
    if not path.is_file():
        raise ResultsError("the runner wrote no results")
    if path.stat().st_size > MAX_RESULTS_BYTES:
        raise ResultsError("the runner's results are larger than allowed")
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    if total > MAX_ARTIFACTS_BYTES:
        raise ResultsError(f"the runner wrote {total} bytes; the limit is {MAX_ARTIFACTS_BYTES}")
    try:
        results = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError):
        raise ResultsError("the runner's results are not valid JSON") from None
    _expect(isinstance(results, dict) and results.get("version") == 1, "unknown results version")
    notebook = results.get("notebook")
    _expect(isinstance(notebook, dict) and notebook.get("status") in {"ok", "error"}, "bad notebook status")
    _expect(isinstance(notebook.get("message"), str), "bad notebook message")
    _expect(isinstance(results.get("meshes"), dict), "bad mesh signatures")
    tests = results.get("tests")
    _expect(isinstance(tests, dict) and set(tests) <= test_ids, "results for tests never asked for")
    for test_id, test in tests.items():
        _check_test(out, test_id, test)
    return results


def _check_test(out: Path, test_id: str, test: Any) -> None:
    _expect(isinstance(test, dict) and test.get("status") in _TEST_STATUSES, f"bad status for {test_id}")
    _expect(isinstance(test.get("message", ""), str), f"bad message for {test_id}")
    if test["status"] == "exported":
        name = test.get("artifact")
        _expect(isinstance(name, str) and bool(_ARTIFACT_NAME.match(name)), f"bad artifact for {test_id}")
        _expect((out / name).is_file(), f"missing artifact for {test_id}")
        test["artifact"] = str(out / name)
    if test["status"] == "value":
        result = test.get("result")
        ok = isinstance(result, dict) and (
            set(result) == {"value"} or (set(result) == {"raises", "message"} and isinstance(result["raises"], str))
        )
        _expect(ok, f"bad value for {test_id}")


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ResultsError(f"malformed results: {message}")
