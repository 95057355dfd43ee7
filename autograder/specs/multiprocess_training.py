"""Assignment 03_multiprocess_training: data-parallel Flax training across processes.

What the students are given (model, optimizer, data, mesh) lives in ``given/multiprocess_training.py``;
this module holds the task spec and the oracles, public stand-ins that compute the same training
run without ``shard_map`` (gradient accumulation over the devices' slices), so that a notebook can
check itself without the instructor's solutions.
"""

from __future__ import annotations

from typing import Any

from ..core.tasks import Assignment, Case, Task, Training
from .given.multiprocess_training import (  # noqa: F401  (the notebook imports them from here too)
    CLASSES,
    FEATURES,
    GLOBAL_BATCH,
    HIDDEN,
    NUM_DEVICES,
    batches_held,
    data_mesh,
    global_batch,
    init_state,
    local_batch,
    local_batch_count,
    loss_fn,
    model_and_optimizer,
    random_batch,
)


def __getattr__(name: str) -> object:
    """``MLP`` and ``optimizer``, built on first use (importing the spec should not import Flax)."""
    if name in ("MLP", "optimizer"):
        return getattr(model_and_optimizer(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------- oracles: the same run, no shard_map


def _make_global_batch_oracle(local_batch: dict[str, Any], mesh: Any) -> Any:
    import jax

    by_example = jax.NamedSharding(mesh, jax.P("data"))
    return jax.tree.map(lambda rows: jax.make_array_from_process_local_data(by_example, rows), local_batch)


def _train_step_oracle(state: dict[str, Any], batch: dict[str, Any], key: Any) -> tuple[dict[str, Any], Any]:
    """Gradient accumulation over the 8 devices' slices, each with its own folded key: what a
    data-parallel step computes, on one device."""
    import jax
    import jax.numpy as jnp
    import optax

    whole = jax.tree.map(lambda a: jax.reshard(a, jax.P()), batch)
    slices = jax.tree.map(lambda a: a.reshape((NUM_DEVICES, -1) + a.shape[1:]), whole)

    def one_device(d: Any, piece: dict[str, Any]) -> Any:
        return jax.value_and_grad(loss_fn)(state["params"], piece, jax.random.fold_in(key, d))

    losses, grads = jax.vmap(one_device)(jnp.arange(NUM_DEVICES), slices)
    grads = jax.tree.map(lambda g: g.mean(axis=0), grads)
    updates, opt_state = model_and_optimizer().optimizer.update(grads, state["opt_state"], state["params"])
    return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, losses.mean()


def _train_oracle(num_steps: int, seed: int) -> tuple[Any, list[Any]]:
    """Every process computes the whole run on whole batches, on its own first device, for as
    many steps as every process's data allows."""
    import jax

    processes = jax.process_count()
    num_steps = min(num_steps, *(batches_held(rank, processes) for rank in range(processes)))
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


# Hidden units that never fire: no dropout mask can matter, only the output bias learns.
TRAINING = Training(
    data_mesh=data_mesh,
    local_batch=local_batch,
    init_state=init_state,
    random_batch=random_batch,
    batch_axis="data",
    quiet={"params/hidden/bias/value": -100.0},
)


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
            training=TRAINING,
        ),
        Task(
            name="train_step",
            grade_id="test_train_step",
            kind="train_step",
            points={"values": 6.0, "collectives": 4.0, "dropout": 5.0},
            cases=(Case(mesh=f"{NUM_DEVICES}:data"),),
            oracle=_train_step_oracle,
            training=TRAINING,
        ),
        Task(
            name="train",
            grade_id="test_train",
            kind="training",
            points=_layout_points((5.0, 10.0, 10.0)),
            cases=VISIBLE_LAYOUTS,
            oracle=_train_oracle,
            training=TRAINING,
        ),
    ),
)
