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
    nothing; a key is wrapped around its data, which compiles nothing either."""
    if draw == "key":
        return key(int(rng.integers(2**31)))
    if draw.startswith("index:"):  # positions in another input's dimension (tasks.Input.below)
        return rng.integers(0, int(draw.split(":")[1]), shape).astype(jax_dtype(dtype))
    if draw == "small_int" or np.issubdtype(np.dtype(jax_dtype(dtype)), np.integer):
        # Small integers keep every sum exact, in bfloat16 too, whatever order a ring adds in.
        high = 5 if draw == "small_int" else 100
        return rng.integers(-high + 1, high, shape).astype(jax_dtype(dtype))
    return rng.standard_normal(shape, dtype=np.float32).astype(jax_dtype(dtype))


def key(seed: int) -> Any:
    """``jax.random.key(seed)``, made from its data on the host: JAX's own compiles two programs
    the first time, so a measuring job with a key among its inputs compiled two more than its
    cases. Its default key (threefry2x32) holds a seed under 2**32 as ``[0, seed]``
    (``tests/trusted/test_inputs.py`` holds it to ``jax.random.key``); any other is JAX's."""
    import jax

    if getattr(jax.config, "jax_default_prng_impl", None) != "threefry2x32" or not 0 <= seed < 2**32:
        return jax.random.key(seed)
    data: Any = np.array([0, seed], np.uint32)  # host data, which JAX takes where it types an Array
    return jax.random.wrap_key_data(data, impl="threefry2x32")
