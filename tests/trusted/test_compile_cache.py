"""The trusted side's compile cache is bounded: a class of distinct programs (or one student's
many) evicts the least recently used, and never fills the grader's disk. Measured in a process of
its own, where JAX writes each compiled program to the cache."""

from __future__ import annotations

import json
import subprocess
import sys

from ..helpers.course import REPO

PROGRAMS = """
import json, os, sys
from autograder.trusted.job_process import use_compile_cache
import jax, jax.numpy as jnp
path, limit = sys.argv[1], int(sys.argv[2])
use_compile_cache(path, limit)
for i in range(20):  # twenty programs, each its own
    jax.jit(lambda x, i=i: jnp.sin(x) * i + jnp.cos(x * i)).lower(jnp.ones(8 + i)).compile()
print(json.dumps(sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))))
"""


def _cache_bytes(path, limit: int) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAMS, str(path), str(limit)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(json.loads(done.stdout.splitlines()[-1]))


def test_the_compile_cache_keeps_at_most_its_limit(tmp_path):
    unbounded = _cache_bytes(tmp_path / "unbounded", -1)
    limit = unbounded // 3
    bounded = _cache_bytes(tmp_path / "bounded", limit)
    assert 0 < bounded <= limit < unbounded
