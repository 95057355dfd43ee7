"""Input values, made on the trusted side from a seed; they never enter the sandbox."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import pspec
from ..core.records import ShardedStepSig, ShardMapSig
from ..harness.shard_map import jax_dtype


def make_inputs(sig: ShardMapSig | ShardedStepSig, seed: int, mesh: Any) -> list[Any]:
    """Device arrays for ``sig``'s inputs, placed with their task shardings on ``mesh``."""
    import jax
    from jax.sharding import NamedSharding

    rng = np.random.default_rng(seed)
    arrays = []
    for spec in sig["inputs"]:
        value = _draw(rng, spec["draw"], tuple(spec["shape"]), spec["dtype"])
        sharding = NamedSharding(mesh, pspec.from_json(spec["spec"]))
        arrays.append(jax.device_put(value, sharding))
    return arrays


def _draw(rng: np.random.Generator, draw: str, shape: tuple[int, ...], dtype: str) -> Any:
    """Host values (NumPy), so that placing them on the mesh slices on the host and compiles
    nothing; only keys need JAX."""
    import jax

    if draw == "key":
        return jax.random.key(int(rng.integers(2**31)))
    if draw.startswith("index:"):  # positions in another input's dimension (tasks.Input.below)
        return rng.integers(0, int(draw.split(":")[1]), shape).astype(jax_dtype(dtype))
    if draw == "small_int" or np.issubdtype(np.dtype(jax_dtype(dtype)), np.integer):
        # Small integers keep every sum exact, in bfloat16 too, whatever order a ring adds in.
        high = 5 if draw == "small_int" else 100
        return rng.integers(-high + 1, high, shape).astype(jax_dtype(dtype))
    return rng.standard_normal(shape, dtype=np.float32).astype(jax_dtype(dtype))
