"""Self-check exercises for lecture 08_fsdp_and_tensor_parallelism (oracles only; never graded).

``bytes_per_device``: parameter, gradient and Adam-state bytes per device under DP, ZeRO-1,
ZeRO-2 and FSDP; the oracle places real float32 arrays, sharded or whole, on a mesh of that many
devices, lets ``optax.adam`` make the state, and reads one device's shards.
``zero_momentum_step``: SGD with momentum whose momentum is sharded over the axis: reduce-scatter
the gradients, update this device's slice, all-gather the parameters; both collectives required,
traffic no more than one all-reduce of the gradient. The oracle gathers everything instead.
``matmul_intensity``: FLOPs per byte of memory traffic of a matmul; the oracle reads both from
XLA's cost analysis of a float32 product (XLA:CPU widens bfloat16, so other item sizes scale its
bytes).
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any, cast

from ..core.tasks import REPLICATED, Assignment, Case, Input, Layout, Task

BY_AXIS = Layout(("AXIS",))  # a vector split over the case's axis: each device its own block
STRATEGIES = {"dp": 0, "zero1": 1, "zero2": 2, "fsdp": 3}  # how many of (state, grads, params) are sharded


def _bytes_per_device_oracle(n_params: int, n_devices: int, strategy: str) -> tuple[int, int, int]:
    import jax
    import jax.numpy as jnp
    import optax

    from ..core.mesh import MeshSpec

    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    mesh = MeshSpec((n_devices,), ("x",)).build()
    sharded = STRATEGIES[strategy]

    def place(split: bool) -> Any:
        spec = jax.P("x") if split else jax.P()
        return jax.device_put(jnp.zeros(n_params, jnp.float32), jax.NamedSharding(mesh, spec))

    def on_one_device(*arrays: Any) -> int:
        return sum(int(a.addressable_shards[0].data.nbytes) for a in arrays)

    params, grads = place(sharded >= 3), place(sharded >= 2)
    with jax.set_mesh(mesh):
        state = optax.adam(1e-3).init(place(sharded >= 1))[0]  # its moments shard like their input
    return on_one_device(params), on_one_device(grads), on_one_device(state.mu, state.nu)


def _zero_momentum_step_oracle(w: Any, g: Any, m: Any, axis_name: str, lr: float, beta: float) -> Any:
    import jax

    # Gather every device's gradient and the whole momentum (plainly right, and costly).
    mean_grad = jax.lax.all_gather(g, axis_name, to="invarying").mean(axis=0)
    momentum = jax.lax.all_gather(m, axis_name, tiled=True, to="invarying")
    return w - lr * (beta * momentum + mean_grad)


def _one_all_reduce_of_the_gradient(case: Case) -> float:
    """Reduce-scatter then all-gather of a vector the size of w: 2 (N-1)/N of it."""
    n = case.mesh_spec.axis_sizes[cast(str, case.axis)]  # these cases all name an axis
    return 2 * (n - 1) / n * prod(case.shapes[0])


def _matmul_intensity_oracle(m: int, k: int, n: int, itemsize: int) -> float:
    import jax
    import jax.numpy as jnp

    a = jax.ShapeDtypeStruct((m, k), jnp.float32)
    b = jax.ShapeDtypeStruct((k, n), jnp.float32)
    # cast: XLA:CPU always gives the cost analysis (it may say None on other backends)
    cost = cast(dict[str, Any], jax.jit(jnp.matmul).lower(a, b).compile().cost_analysis())
    return float(cost["flops"]) / (float(cost["bytes accessed"]) / 4 * itemsize)


def _python_task(name: str, arguments: tuple[tuple[Any, ...], ...], oracle: Callable[..., Any]) -> Task:
    """A plain-Python exercise: one point for the right values on every case."""
    return Task(
        name=name,
        grade_id=f"lecture_{name}",
        kind="python",
        points={"values": 1.0},
        cases=tuple(Case(args=args) for args in arguments),
        oracle=oracle,
    )


EXERCISES = Assignment(
    name="lecture 08_fsdp_and_tensor_parallelism",
    notebook="08_fsdp_and_tensor_parallelism.ipynb",
    solutions="",
    tasks=(
        _python_task(
            "bytes_per_device",
            (
                (1024, 8, "dp"),
                (1024, 8, "zero1"),
                (1024, 8, "zero2"),
                (1024, 8, "fsdp"),
                (96, 4, "zero2"),
                (96, 2, "fsdp"),
                (96, 4, "zero4"),
            ),
            _bytes_per_device_oracle,
        ),
        Task(
            name="zero_momentum_step",
            grade_id="lecture_zero_momentum_step",
            kind="shard_map",
            points={"values": 1.0, "collectives": 1.0, "communication": 1.0},
            cases=(
                Case("8:i", "i", ((16,), (16,), (2,)), "float32", kwargs=(("lr", 0.1), ("beta", 0.9))),
                Case("2x4:x,y", "y", ((12,), (12,), (3,)), "float32", kwargs=(("lr", 0.5), ("beta", 0.5))),
            ),
            inputs=(Input(REPLICATED), Input(BY_AXIS), Input(BY_AXIS)),
            out_layout=REPLICATED,
            tolerance={"float32": (1e-5, 1e-5)},
            allowed=frozenset({"psum_scatter", "all_gather"}),
            required=frozenset({"psum_scatter", "all_gather"}),
            comm_bound=_one_all_reduce_of_the_gradient,
            oracle=_zero_momentum_step_oracle,
        ),
        _python_task(
            "matmul_intensity",
            ((16, 32, 8, 4), (128, 64, 256, 2), (8, 512, 256, 2), (64, 64, 64, 4)),
            _matmul_intensity_oracle,
        ),
    ),
)
