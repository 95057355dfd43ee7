"""Reference results, made by the trusted worker: the reference run through the same wrapper, on the same mesh and inputs,
computed once per assignment x case and cached on disk by a fingerprint of everything they
depend on (the reference's source, the call signature, the seed, the engine code that draws the
inputs and measures the run, the JAX version)."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import JaxcourseError
from ..core.records import Signature
from ..trusted import reference as records
from .package import code_text
from .sandbox import clean_env, run_process

WORKER = "autograder.trusted.worker"
# The code a reference record passes through: a record made by older code may lack a field
# (such as program_bytes) that today's comparison reads, so any change here recomputes it.
ENGINE = ("core", "harness", "trusted")


class ReferenceFailed(JaxcourseError):
    """The reference itself failed to run: a problem with the course, not with a student."""


@dataclass(frozen=True)
class Provider:
    """Where reference functions come from: the instructor's solutions, or the public oracles."""

    kind: str  # solutions | oracle
    source_text: str  # what the fingerprint covers
    job: dict[str, Any]

    @classmethod
    def solutions(cls, root: Path, module: str) -> Provider:
        text = (root / "solutions" / f"{module}.py").read_text()
        return cls("solutions", text, {"kind": "solutions", "root": str(root), "module": module})

    @classmethod
    def oracle(cls, assignment: str) -> Provider:
        from .. import specs

        spec_files = sorted(Path(specs.__file__).parent.glob("*.py"))
        text = "".join(p.read_text() for p in spec_files)
        return cls("oracle", text, {"kind": "oracle", "assignment": assignment})


def fingerprint(provider: Provider, sig: Signature | dict[str, Any], seed: int) -> str:  # {}: a job file's name
    import jax

    blob = json.dumps(
        [provider.kind, provider.source_text, sig, seed, code_text(*ENGINE), jax.__version__], sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def ensure(
    provider: Provider, tests: list[dict[str, Any]], cache: Path, num_devices: int, timeout: float
) -> dict[str, str]:
    """Paths (without suffix) of each test's reference record, computing the missing ones."""
    cache.mkdir(parents=True, exist_ok=True)
    prefixes = {t["id"]: str(cache / fingerprint(provider, t["sig"], t["seed"])) for t in tests}
    missing = [
        {"sig": t["sig"], "seed": t["seed"], "store": prefixes[t["id"]]}
        for t in tests
        if not records.exists(prefixes[t["id"]])
    ]
    if missing:
        job = {"mode": "reference", "num_devices": num_devices, "provider": provider.job, "tests": missing}
        job_path = cache / f"job-{fingerprint(provider, {}, len(missing))}.json"
        job_path.write_text(json.dumps(job))
        argv = [sys.executable, "-m", WORKER, str(job_path)]
        outcome = run_process(argv, cache, clean_env(cache), timeout, job_path.with_suffix(".log"))
        job_path.unlink()
        if outcome.status != "ok":
            raise ReferenceFailed(f"the reference failed to run ({outcome.status}):\n{outcome.log_tail}")
    return prefixes
