"""Patches everything in the sandbox that looks as if it could decide a score: NumPy's and JAX's
comparisons, the self-checks a notebook can call, the harness's own output check, the runner's
time limit (in the running runner, which is this process's __main__, and in the module by name),
and the export itself: the shard_map kind's export, and the kinds registry that hands it every
call, send JAX's all_gather for ring_all_gather. None of it reaches the trusted side, which
compares with its own code in its own process, so the patches win nothing, and the swapped-in
program is judged for what it is: right values made with a collective the task forbids (whose
traffic is then not judged at all).
(ring_all_reduce calls the notebook's own ring, which the patch leaves alone.)"""

EXPECTED = {"ring_all_gather: technique": 0, "ring_all_gather: communication": 0}
MESSAGE_OF = {
    "ring_all_gather: technique": r"the compiled HLO contains all-gather \(all_gather\); ring_all_gather may use only ppermute",
    "ring_all_gather: communication": r"not checked until the technique holds",
}
EXTRA_CELL = """import contextlib, sys, types
import numpy as np
import jax
import jax.numpy as jnp
import autograder.checks, autograder.harness.calls, autograder.harness.shard_map
import autograder.untrusted.checks, autograder.untrusted.runner
always = lambda *args, **kwargs: True
np.allclose = np.array_equal = jnp.allclose = jnp.array_equal = always
np.testing.assert_allclose = lambda *args, **kwargs: None
autograder.checks.check = autograder.untrusted.checks.check = lambda *args, **kwargs: None
autograder.harness.shard_map._check_invariance = lambda *args, **kwargs: None
for runner in (sys.modules["__main__"], autograder.untrusted.runner):
    if hasattr(runner, "time_limit"):
        runner.time_limit = lambda seconds: contextlib.nullcontext()
_export = autograder.harness.shard_map.export
def export(fn, sig):
    if sig["function"] == "ring_all_gather":
        fn = lambda x, axis_name: jax.lax.all_gather(x, axis_name, tiled=True)
    return _export(fn, sig)
autograder.harness.shard_map.export = export
autograder.harness.calls.CALLS["shard_map"] = types.SimpleNamespace(
    REPORTS_MESH=True,
    signature=autograder.harness.shard_map.signature,
    in_sandbox=lambda fn, sig, namespace: export(fn, sig),
)"""
