"""Assignment 04_fsdp_tensor_parallel: the roofline of data, fully sharded and tensor parallelism,
then an FSDP step, a Megatron MLP block and a step on a 2-D ``data`` x ``model`` mesh.

The closed forms are written once, here: the roofline's (``step_times`` and ``critical_batch``
are part 1's oracles), the FSDP step's bytes sent and held per device, and the Megatron block's
all-reduces. The model
is the same small MLP throughout, ``relu(x @ w1) @ w2`` with a squared-error loss, trained by SGD
with momentum; only where its arrays live changes.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.tasks import DTYPE_BYTES, REPLICATED, Assignment, Case, Input, Layout, Step, Task

LEARNING_RATE, MOMENTUM = 0.1, 0.9  # the steps' SGD with momentum
KEEP = 0.75  # the 2-D step's dropout: the chance a value of the block's output is kept

# --- Part 1: the roofline. A model of P parameters in L tensor-parallel blocks of width d, each
# value b bytes; N devices of F flop/s each, W bytes/s of link each; a step of T tokens.
BACKWARD = 2  # the backward pass costs twice the forward: 2 flops per parameter per token, then 4


def compute_seconds(model: dict[str, float], hardware: dict[str, float], tokens: float) -> float:
    """Forward and backward over every device: 2 (1 + BACKWARD) P T / (N F)."""
    return 2 * (1 + BACKWARD) * model["params"] * tokens / (hardware["devices"] * hardware["flops"])


def comm_seconds(strategy: str, model: dict[str, float], hardware: dict[str, float], tokens: float) -> float:
    """What one device sends per step, over its bandwidth: an all-reduce of the gradients (DP);
    gathering the weights for the forward pass and again for the backward pass, then a
    reduce-scatter of the gradients (FSDP); one all-reduce of the activations per block forward
    and one backward (TP)."""
    n = hardware["devices"]
    ring = (n - 1) / n  # of an array, what a ring all-gather or reduce-scatter sends per device
    weights = model["params"] * model["bytes"]
    sent = {
        "dp": 2 * ring * weights,
        "fsdp": 3 * ring * weights,
        "tp": 2 * model["layers"] * 2 * ring * tokens * model["d_model"] * model["bytes"],
    }
    if strategy not in sent:
        raise ValueError(f"unknown strategy {strategy!r}; one of dp, fsdp, tp")
    return sent[strategy] / hardware["bandwidth"]


def step_times(
    strategy: str, model: dict[str, float], hardware: dict[str, float], tokens: float
) -> tuple[float, float]:
    """(compute, communication) seconds per step, per device."""
    return compute_seconds(model, hardware, tokens), comm_seconds(strategy, model, hardware, tokens)


def critical_batch(strategy: str, model: dict[str, float], hardware: dict[str, float]) -> float:
    """The global batch, in tokens, at which compute time equals communication time; TP has none,
    since both grow with the batch."""
    if strategy == "tp":
        raise ValueError("tensor parallelism has no critical batch: compute and communication both grow with it")
    # Compute grows linearly with the batch and DP's and FSDP's communication not at all.
    return comm_seconds(strategy, model, hardware, 0.0) / compute_seconds(model, hardware, 1.0)


MODEL = {"params": 7e9, "layers": 32, "d_model": 4096, "bytes": 2}
H100 = {"devices": 8, "flops": 1e15, "bandwidth": 4.5e11}
SMALL = {"params": 1.3e9, "layers": 24, "d_model": 2048, "bytes": 2}
TPU = {"devices": 16, "flops": 2e14, "bandwidth": 1e11}
ROOFLINE_CASES = tuple(
    Case(args=(strategy, model, hardware, tokens))
    for strategy, model, hardware, tokens in (
        ("dp", MODEL, H100, 4e6),
        ("fsdp", MODEL, H100, 4e6),
        ("tp", MODEL, H100, 4e6),
        ("fsdp", SMALL, TPU, 1e5),
    )
)
CRITICAL_CASES = tuple(Case(args=(strategy, MODEL, H100)) for strategy in ("dp", "fsdp", "tp"))

# --- Part 2: the FSDP step. Every parameter and its momentum split by rows over `data`.
ROWS_OVER_DATA = Layout(("data", None))
FSDP_PATHS = ("params/w1", "params/w2", "opt_state/mu/w1", "opt_state/mu/w2", "batch/x", "batch/y")
STATE = ("params", "opt_state")


def mlp_cases(sizes: tuple[tuple[str, int, int, int], ...], layouts: tuple[Layout, ...]) -> tuple[Case, ...]:
    """Cases from (mesh, batch, d_model, hidden): each array's per-device shape follows from its
    layout on the mesh (w1 is d x h, w2 h x d, x and y batch x d, then a key where there is one)."""
    cases = []
    for mesh, b, d, h in sizes:
        globals_ = ((d, h), (h, d), (d, h), (h, d), (b, d), (b, d), ())
        spec = Case(mesh).mesh_spec
        shapes = tuple(_local(shape, layout, spec.axis_sizes) for shape, layout in zip(globals_, layouts))
        cases.append(Case(mesh, shapes=shapes))
    return tuple(cases)


def _local(shape: tuple[int, ...], layout: Layout, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(
        n // math.prod(sizes[a] for a in _axes(entry))
        for n, entry in zip(shape, layout.template + (None,) * len(shape))
    )


def _axes(entry: Any) -> tuple[str, ...]:
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


FSDP_LAYOUTS = (ROWS_OVER_DATA,) * 6
FSDP_VISIBLE = mlp_cases((("8:data", 16, 16, 32), ("2x4:data,model", 8, 8, 16)), FSDP_LAYOUTS)


def _data_size(case: Case) -> int:
    return case.mesh_spec.axis_sizes["data"]


def _weights_bytes(case: Case) -> float:
    """Bytes of all the parameters (w1 and w2), whole."""
    h, d = case.shapes[0][1], case.shapes[1][1]  # w1's columns (h) and w2's (d) are not split
    return 2 * d * h * DTYPE_BYTES[case.dtype]


def fsdp_bytes(case: Case) -> float:
    """Sent per device per step: the weights gathered once (kept for the backward pass), the
    gradients reduce-scattered, and the loss all-reduced."""
    ring = (_data_size(case) - 1) / _data_size(case)
    return ring * (2 * _weights_bytes(case) + 2 * DTYPE_BYTES[case.dtype])


def fsdp_memory(case: Case) -> float:
    """Held per device at rest after the step: 1/N of the parameters and 1/N of their momentum."""
    return 2 * _weights_bytes(case) / _data_size(case)


# --- Part 3: the Megatron MLP block, on the case's axis (`model`).
COLS = Layout((None, "AXIS"))
ROWS = Layout(("AXIS", None))


def megatron_cases(sizes: tuple[tuple[str, int, int, int, str], ...]) -> tuple[Case, ...]:
    """Forward and differentiated cases from (mesh, batch, d_model, hidden, dtype)."""
    cases = []
    for mesh, b, d, h, dtype in sizes:
        n = Case(mesh).mesh_spec.axis_sizes["model"]
        case = Case(mesh, "model", ((b, d), (d, h // n), (h // n, d)), dtype)
        cases += [case, Case(mesh, "model", case.shapes, dtype, differentiate=True)]
    return tuple(cases)


def megatron_all_reduces(case: Case) -> dict[str, int]:
    """One all-reduce forward (after the row-parallel layer); one more backward (the input's
    gradient, summed over the column-parallel layer's shards)."""
    return {"psum": 2 if case.differentiate else 1}


def megatron_bytes(case: Case) -> float:
    """Each all-reduce carries the batch x d_model activations (or their gradient) once."""
    n = case.mesh_spec.axis_sizes["model"]
    b, d = case.shapes[0]
    return megatron_all_reduces(case)["psum"] * 2 * (n - 1) / n * b * d * DTYPE_BYTES[case.dtype]


# --- Part 4: DP x TP. Weights split over `model` as in part 3, the batch over `data`.
TWO_D_PATHS = (*FSDP_PATHS, "key")
BY_DATA = Layout(("data", None))
TWO_D_LAYOUTS = (Layout((None, "model")), Layout(("model", None))) * 2 + (BY_DATA, BY_DATA, REPLICATED)
TWO_D_VISIBLE = mlp_cases((("2x4:data,model", 16, 8, 32),), TWO_D_LAYOUTS)


# --- Oracles: public stand-ins for the references, written on JAX's own sharding (no shard_map).
def mlp_loss(params: dict[str, Any], x: Any, y: Any, keep: Any = None) -> Any:
    import jax
    import jax.numpy as jnp

    out = jax.nn.relu(x @ params["w1"]) @ params["w2"]
    if keep is not None:
        out = jnp.where(keep, out / KEEP, 0.0)
    return jnp.mean(jnp.square(out - y))


def sgd_momentum(params: dict[str, Any], mu: dict[str, Any], grads: dict[str, Any]) -> tuple[Any, Any]:
    import jax

    mu = jax.tree.map(lambda m, g: MOMENTUM * m + g, mu, grads)
    return jax.tree.map(lambda p, m: p - LEARNING_RATE * m, params, mu), mu


def _whole(tree: Any) -> Any:
    """Every array of ``tree`` whole on every device, so the oracles need no sharding rules."""
    import jax

    return jax.tree.map(lambda v: jax.reshard(v, jax.P()), tree)


def _fsdp_oracle(params: Any, opt_state: Any, batch: Any) -> Any:
    import jax

    params, opt_state, batch = _whole((params, opt_state, batch))
    loss, grads = jax.value_and_grad(mlp_loss)(params, batch["x"], batch["y"])
    params, mu = sgd_momentum(params, opt_state["mu"], grads)
    return params, {"mu": mu}, loss


def _megatron_oracle(x: Any, w1: Any, w2: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum(jax.nn.relu(x @ w1) @ w2, axis_name)


def _two_d_oracle(params: Any, opt_state: Any, batch: Any, key: Any) -> Any:
    """The same step on the whole batch, each row's mask drawn as the task asks: from the key
    folded with the index, along `data`, of the device that holds the row."""
    import jax
    import jax.numpy as jnp

    data = jax.sharding.get_abstract_mesh().shape["data"]
    params, opt_state, batch = _whole((params, opt_state, batch))
    rows, d = batch["x"].shape[0] // data, params["w2"].shape[1]
    keep = jnp.concatenate([jax.random.bernoulli(jax.random.fold_in(key, i), KEEP, (rows, d)) for i in range(data)])
    loss, grads = jax.value_and_grad(mlp_loss)(params, batch["x"], batch["y"], keep)
    params, mu = sgd_momentum(params, opt_state["mu"], grads)
    return params, {"mu": mu}, loss


STEP_TOLERANCE = {"float32": (1e-4, 1e-5)}
ACTIVATIONS_TOLERANCE = {"float32": (1e-4, 1e-4), "bfloat16": (2e-2, 2e-1)}

ASSIGNMENT = Assignment(
    name="04_fsdp_tensor_parallel",
    notebook="04_fsdp_tensor_parallel.ipynb",
    solutions="fsdp_tensor_parallel",
    tasks=(
        Task(
            name="step_times",
            grade_id="test_step_times",
            kind="python",
            points={"values": 6.0, "hidden values": 3.0},
            cases=ROOFLINE_CASES,
            oracle=step_times,
        ),
        Task(
            name="critical_batch",
            grade_id="test_critical_batch",
            kind="python",
            points={"values": 4.0, "hidden values": 2.0},
            cases=CRITICAL_CASES,
            oracle=critical_batch,
        ),
        Task(
            name="fsdp_step",
            grade_id="test_fsdp_step",
            kind="sharded_step",
            points={"values": 4.0, "hidden values": 2.0, "memory": 4.0, "communication": 3.0},
            cases=FSDP_VISIBLE,
            inputs=tuple(Input(layout) for layout in FSDP_LAYOUTS),
            tolerance=STEP_TOLERANCE,
            comm_bytes=fsdp_bytes,
            step=Step(FSDP_PATHS, STATE),
            memory_bytes=fsdp_memory,
            oracle=_fsdp_oracle,
        ),
        Task(
            name="megatron_mlp",
            grade_id="test_megatron_mlp",
            kind="shard_map",
            points={"values": 4.0, "hidden values": 2.0, "collectives": 3.0, "communication": 3.0},
            cases=megatron_cases((("8:model", 8, 16, 64, "float32"), ("2x4:data,model", 4, 8, 32, "float32"))),
            inputs=(Input(REPLICATED), Input(COLS), Input(ROWS)),
            out_layout=REPLICATED,
            tolerance=ACTIVATIONS_TOLERANCE,
            allowed=frozenset({"psum"}),
            required=frozenset({"psum"}),
            collective_counts=megatron_all_reduces,
            comm_bytes=megatron_bytes,
            oracle=_megatron_oracle,
        ),
        Task(
            name="dp_tp_step",
            grade_id="test_dp_tp_step",
            kind="sharded_step",
            points={"values": 6.0, "hidden values": 4.0},
            cases=TWO_D_VISIBLE,
            inputs=tuple(Input(layout) for layout in TWO_D_LAYOUTS[:-1]) + (Input(REPLICATED, "key", "key"),),
            tolerance=STEP_TOLERANCE,
            step=Step(TWO_D_PATHS, STATE),
            oracle=_two_d_oracle,
        ),
    ),
)
