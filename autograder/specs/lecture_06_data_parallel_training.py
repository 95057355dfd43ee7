"""Self-check exercises for lecture 06_data_parallel_training (oracles only; never graded).

``data_parallel_gradient``: the gradient of a loss over the whole (sharded) batch with respect to
replicated weights, the same on every device, by averaging gradients rather than gathering data.
``dropout_keep_mask``: this device's dropout mask, different along the data axis and the same
along every other axis.
"""

from __future__ import annotations

from math import prod
from typing import Any, cast

from ..core.tasks import REPLICATED, Assignment, Case, Input, Layout, Task

BATCH_SPLIT = Layout(("AXIS", None))  # (batch, features): examples over the case's axis


def _all_reduce_weights(case: Case) -> float:
    """One all-reduce of a gradient the size of the weights: 2 (N-1)/N of it."""
    n = case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis
    return 2 * (n - 1) / n * prod(case.shapes[0])


def _data_parallel_gradient_oracle(w: Any, x: Any, y: Any, axis_name: str) -> Any:
    import jax
    import jax.numpy as jnp

    # Gather the whole batch on every device (wasteful, but plainly right) and differentiate.
    xs = jax.lax.all_gather(x, axis_name, tiled=True, to="invarying")
    ys = jax.lax.all_gather(y, axis_name, tiled=True, to="invarying")
    return jax.grad(lambda w: jnp.mean((xs @ w - ys) ** 2))(w)


def _dropout_keep_mask_oracle(key: Any, axis_name: str, rows: int, cols: int, rate: float) -> Any:
    import jax
    import jax.numpy as jnp
    from flax import nnx

    # The units that Flax's own dropout layer keeps, given this device's key.
    device_key = jax.random.fold_in(key, jax.lax.axis_index(axis_name))
    return nnx.Dropout(rate)(jnp.ones((rows, cols)), rngs=device_key) != 0


def _mask_case(mesh: str, axis: str, rows: int, cols: int, rate: float) -> Case:
    return Case(mesh, axis, ((),), "key", kwargs=(("rows", rows), ("cols", cols), ("rate", rate)))


EXERCISES = Assignment(
    name="lecture 06_data_parallel_training",
    notebook="06_data_parallel_training.ipynb",
    solutions="",
    tasks=(
        Task(
            name="data_parallel_gradient",
            grade_id="lecture_data_parallel_gradient",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((5, 3), (4, 5), (4, 3)), "float32"),
                Case("2x4:x,y", "y", ((6, 2), (3, 6), (3, 2)), "float32"),
            ),
            inputs=(Input(REPLICATED), Input(BATCH_SPLIT), Input(BATCH_SPLIT)),
            out_layout=REPLICATED,
            tolerance={"float32": (1e-5, 1e-5)},
            allowed=frozenset({"psum"}),
            required=frozenset({"psum"}),
            comm_bound=_all_reduce_weights,
            oracle=_data_parallel_gradient_oracle,
        ),
        Task(
            name="dropout_keep_mask",
            grade_id="lecture_dropout_keep_mask",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0},
            cases=(_mask_case("8:i", "i", 4, 3, 0.25), _mask_case("2x4:x,y", "x", 2, 5, 0.4)),
            inputs=(Input(REPLICATED, "key"),),
            allowed=frozenset(),
            oracle=_dropout_keep_mask_oracle,
        ),
    ),
)
