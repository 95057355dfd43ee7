"""Assignment 03_multiprocess_training: data-parallel Flax training across processes.

What the students are given (the model, the optimizer, the data each process reads, the mesh)
lives here, in one place: the notebook imports it, the reference solutions and the grader's
trusted side build their inputs from it. The oracles are public stand-ins that compute the same
training run without ``shard_map`` (gradient accumulation over the devices' slices), so that a
notebook can check itself without the instructor's solutions.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..tasks import Assignment, Case, Task

FEATURES, HIDDEN, CLASSES = 16, 32, 4
GLOBAL_BATCH = 32  # examples per step, over all devices of all processes
NUM_DEVICES = 8  # every layout has the same global mesh: 8 devices on one axis, "data"


def data_mesh():
    """Every device of every process on one explicit axis, ``data``."""
    import jax

    return jax.make_mesh((jax.device_count(),), ("data",), axis_types=(jax.sharding.AxisType.Explicit,))


@functools.cache
def model_and_optimizer() -> SimpleNamespace:
    """The model class, its graph and the optimizer, built on first use: importing the spec (as
    the grader does for every assignment) should not import Flax."""
    from flax import nnx
    import optax

    class MLP(nnx.Module):
        """Two dense layers with dropout between them."""

        def __init__(self, rngs: nnx.Rngs) -> None:
            self.hidden = nnx.Linear(FEATURES, HIDDEN, rngs=rngs)
            self.dropout = nnx.Dropout(0.25)
            self.out = nnx.Linear(HIDDEN, CLASSES, rngs=rngs)

        def __call__(self, x, dropout_key):
            h = self.dropout(nnx.relu(self.hidden(x)), rngs=dropout_key)
            return self.out(h)

    # Plain SGD with momentum: unlike Adam, its step grows with the gradient, so a gradient that
    # is summed instead of averaged shows in the parameters.
    optimizer = optax.sgd(0.1, momentum=0.9)
    return SimpleNamespace(MLP=MLP, graphdef=nnx.split(MLP(nnx.Rngs(0)))[0], optimizer=optimizer)


def __getattr__(name: str) -> Any:
    """``MLP`` and ``optimizer``, as module attributes, built on first use."""
    if name in ("MLP", "optimizer"):
        return getattr(model_and_optimizer(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def init_state(seed):
    """The training state: the model's parameters and the optimizer's state, as host values."""
    from flax import nnx

    params = nnx.split(model_and_optimizer().MLP(nnx.Rngs(seed)))[1]
    return {"params": params, "opt_state": model_and_optimizer().optimizer.init(params)}


def loss_fn(params, batch, dropout_key):
    """Mean cross-entropy of the model with dropout (drawn from ``dropout_key``) on ``batch``."""
    import optax
    from flax import nnx

    logits = nnx.merge(model_and_optimizer().graphdef, params)(batch["x"], dropout_key)
    return optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"]).mean()


def global_batch(step, seed):
    """The whole batch of one step, as every process could make it: points labelled by a fixed
    random linear teacher."""
    rng = np.random.default_rng([seed, step])
    teacher = np.random.default_rng([seed]).standard_normal((FEATURES, CLASSES)).astype(np.float32)
    x = rng.standard_normal((GLOBAL_BATCH, FEATURES)).astype(np.float32)
    return {"x": x, "y": np.argmax(x @ teacher, axis=1).astype(np.int32)}


def local_batch(step, seed):
    """This process's share of the batch of ``step``: the rows of the devices it owns, as NumPy.
    In a real job each process would read only these rows from its own files."""
    import jax

    rows = GLOBAL_BATCH // jax.process_count()
    start = jax.process_index() * rows
    return {name: value[start : start + rows] for name, value in global_batch(step, seed).items()}


# ---------------------------------------------------------------- oracles: the same run, no shard_map


def _make_global_batch_oracle(local_batch, mesh):
    import jax

    by_example = jax.NamedSharding(mesh, jax.P("data"))
    return jax.tree.map(lambda rows: jax.make_array_from_process_local_data(by_example, rows), local_batch)


def _train_step_oracle(state, batch, key):
    """Gradient accumulation over the 8 devices' slices, each with its own folded key: what a
    data-parallel step computes, on one device."""
    import jax
    import jax.numpy as jnp
    import optax

    whole = jax.tree.map(lambda a: jax.reshard(a, jax.P()), batch)
    slices = jax.tree.map(lambda a: a.reshape((NUM_DEVICES, -1) + a.shape[1:]), whole)

    def one_device(d, piece):
        return jax.value_and_grad(loss_fn)(state["params"], piece, jax.random.fold_in(key, d))

    losses, grads = jax.vmap(one_device)(jnp.arange(NUM_DEVICES), slices)
    grads = jax.tree.map(lambda g: g.mean(axis=0), grads)
    updates, opt_state = model_and_optimizer().optimizer.update(grads, state["opt_state"], state["params"])
    return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, losses.mean()


def _train_oracle(num_steps, seed):
    """Every process computes the whole run on whole batches, on its own first device."""
    import jax

    step = jax.jit(_train_step_oracle)
    mesh = jax.make_mesh((1,), ("data",), axis_types=(jax.sharding.AxisType.Explicit,), devices=jax.local_devices()[:1])
    losses = []
    with jax.set_mesh(mesh):
        state = init_state(seed)
        for i in range(num_steps):
            state, loss = step(state, global_batch(i, seed), jax.random.fold_in(jax.random.key(seed), i))
            losses.append(loss)
    return state["params"], losses


# ---------------------------------------------------------------- the assignment

NUM_STEPS, SEED = 6, 0
LAYOUT_TIMEOUT = 40.0  # seconds for one layout's processes to start, train and finish


def layout(processes: int, devices: int) -> Case:
    """A layout of the same 8-device mesh: ``processes`` x ``devices`` each."""
    run = (("num_steps", NUM_STEPS), ("seed", SEED), ("timeout", LAYOUT_TIMEOUT))
    return Case(mesh=f"{NUM_DEVICES}:data", args=(processes, devices), kwargs=run)


VISIBLE_LAYOUTS = (layout(1, 8), layout(2, 4))  # the notebook's self-checks run these two
LAYOUT_PARTS = ("1 process x 8 devices", "2 processes x 4 devices", "4 processes x 2 devices")


def _layout_points(points: tuple[float, float, float]) -> dict[str, float]:
    return dict(zip(LAYOUT_PARTS, points))


ASSIGNMENT = Assignment(
    name="03_multiprocess_training",
    notebook="03_multiprocess_training.ipynb",
    solutions="multiprocess_training",
    tasks=(
        Task(
            name="make_global_batch",
            grade_id="test_make_global_batch",
            kind="training",
            points=_layout_points((2.0, 4.0, 4.0)),
            cases=VISIBLE_LAYOUTS,
            oracle=_make_global_batch_oracle,
        ),
        Task(
            name="train_step",
            grade_id="test_train_step",
            kind="train_step",
            points={"values": 6.0, "collectives": 4.0, "dropout": 5.0},
            cases=(Case(mesh=f"{NUM_DEVICES}:data"),),
            oracle=_train_step_oracle,
        ),
        Task(
            name="train",
            grade_id="test_train",
            kind="training",
            points=_layout_points((5.0, 10.0, 10.0)),
            cases=VISIBLE_LAYOUTS,
            oracle=_train_oracle,
        ),
    ),
)
