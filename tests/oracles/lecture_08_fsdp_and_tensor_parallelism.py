"""Independent stand-ins for lecture_08_fsdp_and_tensor_parallelism's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any, cast

STRATEGIES = {"dp": 0, "zero1": 1, "zero2": 2, "fsdp": 3}  # how many of (state, grads, params) are sharded


def _bytes_per_device_oracle(n_params: int, n_devices: int, strategy: str) -> tuple[int, int, int]:
    import jax
    import jax.numpy as jnp
    import optax

    from autograder.core.mesh import MeshSpec

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


def _matmul_intensity_oracle(m: int, k: int, n: int, itemsize: int) -> float:
    import jax
    import jax.numpy as jnp

    a = jax.ShapeDtypeStruct((m, k), jnp.float32)
    b = jax.ShapeDtypeStruct((k, n), jnp.float32)
    # cast: XLA:CPU always gives the cost analysis (it may say None on other backends)
    cost = cast(dict[str, Any], jax.jit(jnp.matmul).lower(a, b).compile().cost_analysis())
    return float(cost["flops"]) / (float(cost["bytes accessed"]) / 4 * itemsize)


ORACLES = {
    "bytes_per_device": _bytes_per_device_oracle,
    "zero_momentum_step": _zero_momentum_step_oracle,
    "matmul_intensity": _matmul_intensity_oracle,
}
