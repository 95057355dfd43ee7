"""Replaces NumPy's and JAX's comparisons and the grader's own checks inside the sandbox, and
makes the harness export JAX's all_gather for ring_all_gather. The trusted side compares with its
own code, so the patches win nothing, and the swapped-in program is judged for what it is: right
values made with a collective the task forbids. (ring_all_reduce calls the notebook's own ring,
which the patch leaves alone.)"""

EXPECTED = {"ring_all_gather: collectives": 0}
EXTRA_CELL = """import numpy as np
import jax.numpy as jnp
import autograder.compare, autograder.harness, autograder.measure
always = lambda *args, **kwargs: True
np.allclose = np.array_equal = jnp.allclose = jnp.array_equal = always
np.testing.assert_allclose = lambda *args, **kwargs: None
autograder.measure.compare_values = lambda *args, **kwargs: {"ok": True, "message": ""}
autograder.compare.score_task = lambda task, measured: []
_export = autograder.harness.export
def export(fn, sig):
    if sig["function"] == "ring_all_gather":
        fn = lambda x, axis_name: jax.lax.all_gather(x, axis_name, tiled=True)
    return _export(fn, sig)
autograder.harness.export = export"""
