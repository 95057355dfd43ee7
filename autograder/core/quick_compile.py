"""How the grader compiles. The programs it compiles are small and run a few times, so compiling
is most of their cost: on CPU both its sides (the sandbox's runner and the trusted worker) compile
with LLVM's optimisations off and XLA's loop emitters, which takes about a quarter as long
(benchmarks/trusted_compile.py) and keeps every collective and buffer a census reads
(tests/trusted/test_quick_compile.py). Students' own JupyterLab compiles as JAX does by default.

These are private XLA options, which come and go between releases: none is passed unless the
running XLA knows it, and one it lacks is left out with a warning. The trusted side asks its own
compiler. The runner cannot (an unknown flag in ``XLA_FLAGS`` kills a process as its JAX starts):
the sandbox that starts it asks a fresh process, once per jaxlib version, keeps the answer on disk
and hands it over tagged with that version, for a runner on the same jaxlib only. So grading pays
nothing per submission, and the grader's own process never starts JAX.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import environment
from .files import write_atomic

log = logging.getLogger(__name__)

QUICK_CPU: dict[str, Any] = {
    "xla_backend_optimization_level": 0,  # LLVM's -O0: these programs run once, on small inputs
    # XLA's loop emitters, quicker to compile than MLIR's. Gone by JAX 0.11 (seen on 0.11.2), where
    # it is left out: the grader then compiles more slowly, and test_quick_compile says which went.
    "xla_cpu_use_fusion_emitters": False,
    "xla_cpu_parallel_codegen_split_count": 1,  # one LLVM module: a grader compiles on one thread
}

RUNNER_FLAGS = environment.XLA_FLAGS
UNKNOWN_OPTION = re.compile(r"No such compile option: '([^']+)'")
UNKNOWN_FLAGS = re.compile(r"Unknown flags? in XLA_FLAGS: (.*)")
PROBE = "import jax; jax.jit(lambda x: x + 1)(1)"  # a first compile, which reads XLA_FLAGS
_asking = threading.Lock()  # a grader starts several sandboxes at once: one asks


def compiler_options(mesh: Any) -> dict[str, Any]:
    """The options to compile a program on ``mesh``'s devices with: those of ``QUICK_CPU`` that
    the compiler knows, on CPU."""
    return dict(known_options()) if mesh.devices.flat[0].platform == "cpu" else {}


@functools.cache
def known_options() -> dict[str, Any]:
    """``QUICK_CPU``'s options that this process's CPU compiler accepts, asked once. A process
    handed the flags its own jaxlib knows (``runner_env``, as the trusted worker is) takes those,
    and compiles nothing: each of its jobs is a fresh process, for which the probe below was a
    program more to compile. Otherwise a trivial program is compiled with them, less each one the
    compiler names as unknown (with a warning); any other refusal (a value it cannot take) is
    raised. Starts JAX's CPU backend."""
    handed = runner_flags().split()
    if handed:
        return {name: value for name, value in QUICK_CPU.items() if _flag(name, value) in handed}
    import jax
    import jax.numpy as jnp

    options = dict(QUICK_CPU)
    with jax.default_device(jax.devices("cpu")[0]):
        lowered = jax.jit(lambda x: x + 1).lower(jax.ShapeDtypeStruct((), jnp.int32))
        while True:
            try:
                lowered.compile(options)
                return options
            except jax.errors.JaxRuntimeError as error:
                unknown = UNKNOWN_OPTION.search(str(error))
                if unknown is None or unknown.group(1) not in options:
                    raise
                _left_out("compile option", unknown.group(1), jax.__version__)
                del options[unknown.group(1)]


@functools.cache
def xla_flags() -> str:
    """``QUICK_CPU`` as ``XLA_FLAGS`` spells it, less the flags this Python's XLA does not know:
    for a process whose JAX has not started (the sandbox's runner, whose notebook compiles through
    ``jax.jit`` itself). Asked of a fresh process once per jaxlib version and list of flags and
    kept in the user's cache folder; this process's JAX is not started."""
    with _asking:  # a second thread here finds the first one's answer on disk
        flags = {name: _flag(name, value) for name, value in QUICK_CPU.items()}
        key = f"{jaxlib_version()} {' '.join(flags.values())}"
        kept = _cache_folder() / f"xla-flags-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
        try:
            answer = kept.read_text()
        except (OSError, UnicodeDecodeError):
            answer = _ask_for_flags(dict(flags))
            try:
                kept.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(kept, answer)
            except OSError:
                pass  # a read-only home: the next process asks again
        for name in (name for name, flag in flags.items() if flag not in answer.split()):
            _left_out("XLA flag", name, jaxlib_version())
        return answer


def _flag(name: str, value: Any) -> str:
    """An option as ``XLA_FLAGS`` spells it."""
    return f"--{name}={str(value).lower()}"


def _ask_for_flags(flags: dict[str, str]) -> str:
    """``flags`` (by name) that a fresh JAX starts with, less each one its XLA names as unknown."""
    while True:
        env = {**os.environ, "XLA_FLAGS": " ".join(flags.values()), "JAX_PLATFORMS": "cpu"}
        done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            return " ".join(flags.values())
        unknown = UNKNOWN_FLAGS.search(done.stderr)
        named = [name for name, flag in flags.items() if unknown and flag in unknown.group(1).split()]
        if not named:
            raise RuntimeError(f"JAX did not start to say which XLA flags it knows: {done.stderr.strip()[-500:]}")
        for name in named:
            del flags[name]


def runner_env() -> dict[str, str]:
    """What the runner's environment holds for ``runner_flags``: ``xla_flags``, and whose they are."""
    return {RUNNER_FLAGS: f"{jaxlib_version()} {xla_flags()}"}


def runner_flags(environ: Mapping[str, str] = os.environ) -> str:
    """The runner's ``XLA_FLAGS``, set before its JAX starts: those ``runner_env`` handed it, if
    they were asked of its own jaxlib's version; none otherwise."""
    version, _, flags = environ.get(RUNNER_FLAGS, "").partition(" ")
    return flags if version == jaxlib_version() else ""


def jaxlib_version() -> str:
    """The installed jaxlib's version, without starting JAX (which imports jaxlib anyway)."""
    import jaxlib.version

    return jaxlib.version.__version__


def _cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jaxcourse"


def _left_out(what: str, name: str, version: str) -> None:
    log.warning(
        "the %s %s is left out: JAX %s's XLA does not know it, so the grader compiles more slowly than it could",
        what,
        name,
        version,
    )
