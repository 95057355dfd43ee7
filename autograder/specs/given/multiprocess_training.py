"""What students of 03_multiprocess_training are given: the model, the optimizer, the data each
process reads and the mesh. The notebook imports it, and so do the reference solutions, the task
spec (``specs/multiprocess_training.py``) and, through the spec's ``Training`` setup, the
harness and the trusted verdicts."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np

FEATURES, HIDDEN, CLASSES = 16, 32, 4
GLOBAL_BATCH = 32  # examples per step, over all devices of all processes
NUM_DEVICES = 8  # every layout has the same global mesh: 8 devices on one axis, "data"


def data_mesh() -> Any:
    """Every device of every process on one explicit axis, ``data``."""
    import jax

    return jax.make_mesh((jax.device_count(),), ("data",), axis_types=(jax.sharding.AxisType.Explicit,))


@functools.cache
def model_and_optimizer() -> SimpleNamespace:
    """The model class, its graph and the optimizer, built on first use: importing the spec (as
    the grader does for every assignment) should not import Flax."""
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        """Two dense layers with dropout between them."""

        def __init__(self, rngs: nnx.Rngs) -> None:
            self.hidden = nnx.Linear(FEATURES, HIDDEN, rngs=rngs)
            self.dropout = nnx.Dropout(0.25)
            self.out = nnx.Linear(HIDDEN, CLASSES, rngs=rngs)

        def __call__(self, x: Any, dropout_key: Any) -> Any:
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


def init_state(seed: int) -> dict[str, Any]:
    """The training state: the model's parameters and the optimizer's state, as host values."""
    from flax import nnx

    params = nnx.split(model_and_optimizer().MLP(nnx.Rngs(seed)))[1]
    return {"params": params, "opt_state": model_and_optimizer().optimizer.init(params)}


def loss_fn(params: Any, batch: dict[str, Any], dropout_key: Any) -> Any:
    """Mean cross-entropy of the model with dropout (drawn from ``dropout_key``) on ``batch``."""
    import optax
    from flax import nnx

    logits = nnx.merge(model_and_optimizer().graphdef, params)(batch["x"], dropout_key)
    return optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"]).mean()


def global_batch(step: int, seed: int) -> dict[str, np.ndarray]:
    """The whole batch of one step, as every process could make it: points labelled by a fixed
    random linear teacher."""
    rng = np.random.default_rng([seed, step])
    teacher = np.random.default_rng([seed]).standard_normal((FEATURES, CLASSES)).astype(np.float32)
    x = rng.standard_normal((GLOBAL_BATCH, FEATURES)).astype(np.float32)
    return {"x": x, "y": np.argmax(x @ teacher, axis=1).astype(np.int32)}


_held: list[int] = []  # this process's batch count in a graded run, told by the grader's harness


def hold_batches(count: int) -> None:
    """How many batches this process's data holds in the run it is part of: the grader's
    harness tells each process its own count, and no process can compute another's."""
    _held[:] = [count]


def local_batch_count(seed: int) -> int:
    """How many batches this process's own data holds (another process may hold fewer). Outside
    a graded run, the odd-numbered processes hold two fewer, as when files of different sizes are
    split over hosts."""
    import jax

    if _held:
        return _held[0]
    return 7 - 2 * (jax.process_index() % 2) if jax.process_count() > 1 else 7


def local_batch(step: int, seed: int) -> dict[str, np.ndarray]:
    """This process's share of the batch of ``step``: the rows of the devices it owns, as NumPy.
    In a real job each process would read only these rows from its own files, and they run out."""
    import jax

    rank, held = jax.process_index(), local_batch_count(seed)
    if step >= held:
        raise IndexError(
            f"process {rank}'s data holds {held} batches, and step {step} asks for batch {step + 1}: every "
            "process must run the same number of steps, so agree on it before the loop (the last-batch hazard)"
        )
    rows = GLOBAL_BATCH // jax.process_count()
    start = rank * rows
    return {name: value[start : start + rows] for name, value in global_batch(step, seed).items()}


def random_batch(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A global batch of random examples, to judge one training step on inputs no one has seen."""
    return {
        "x": rng.standard_normal((GLOBAL_BATCH, FEATURES), dtype=np.float32),
        "y": rng.integers(0, CLASSES, GLOBAL_BATCH).astype(np.int32),
    }
