"""Reference results: the reference run through the same wrapper, on the same mesh and inputs,
computed once per assignment x case and cached on disk by a fingerprint of everything they
depend on (the reference's source, the call signature, the seed, the engine code that draws the
inputs and measures the run, the JAX version)."""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .harness import Signature
from .sandbox import clean_env, run_process


class ReferenceError(Exception):
    """The reference itself failed to run: a problem with the course, not with a student."""


@dataclass(frozen=True)
class Provider:
    """Where reference functions come from: the instructor's solutions, or the public oracles."""

    kind: str  # solutions | oracle
    source_text: str  # what the fingerprint covers
    job: dict[str, Any]

    @classmethod
    def solutions(cls, root: Path, module: str) -> "Provider":
        text = (root / "solutions" / f"{module}.py").read_text()
        return cls("solutions", text, {"kind": "solutions", "root": str(root), "module": module})

    @classmethod
    def oracle(cls, assignment: str) -> "Provider":
        from . import specs

        spec_files = sorted(Path(specs.__file__).parent.glob("*.py"))
        text = "".join(p.read_text() for p in spec_files)
        return cls("oracle", text, {"kind": "oracle", "assignment": assignment})


# The code a reference record passes through: a record made by older code may lack a field
# (such as program_bytes) that today's comparison reads, so any change here recomputes it.
ENGINE = ("evaluate", "harness", "inputs", "measure", "trace", "training", "training_verdict")


@functools.cache
def _engine_text() -> str:
    here = Path(__file__).parent
    return "".join((here / f"{name}.py").read_text() for name in ENGINE)


def fingerprint(provider: Provider, sig: Signature, seed: int) -> str:
    import jax

    blob = json.dumps([provider.kind, provider.source_text, sig, seed, _engine_text(), jax.__version__], sort_keys=True)
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
        if not Path(prefixes[t["id"]] + ".json").is_file()
    ]
    if missing:
        job = {"mode": "reference", "num_devices": num_devices, "provider": provider.job, "tests": missing}
        job_path = cache / f"job-{fingerprint(provider, {}, len(missing))}.json"
        job_path.write_text(json.dumps(job))
        argv = [sys.executable, "-m", "autograder.evaluate", str(job_path)]
        outcome = run_process(argv, cache, clean_env(cache), timeout, job_path.with_suffix(".log"))
        job_path.unlink()
        if outcome.status != "ok":
            raise ReferenceError(f"the reference failed to run ({outcome.status}):\n{outcome.log_tail}")
    return prefixes
