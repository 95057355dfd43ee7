"""Independent stand-ins for sharded_matmul's references, written another way (on JAX's own collectives
or sharding): tests/specs/test_oracles.py holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Values one device sends under each plan, for A (m x k) @ B (k x n) on a ring of N devices.
CLOSED_FORMS: dict[str, Callable[[int, int, int, int], float]] = {
    "matmul_allgather": lambda m, k, n, N: (N - 1) / N * m * k,  # gather A
    "matmul_allreduce": lambda m, k, n, N: 2 * (N - 1) / N * m * n,  # all-reduce C
    "matmul_gather_both": lambda m, k, n, N: (N - 1) / N * (m * k + k * n),  # gather A and B
    "matmul_reduce_scatter": lambda m, k, n, N: (N - 1) / N * m * n,  # reduce-scatter C
    "matmul_reshard": lambda m, k, n, N: (N - 1) / N * k * n,  # gather B
    "collective_matmul_allgather": lambda m, k, n, N: (N - 1) / N * m * k,  # N - 1 blocks of A
    "collective_matmul_reduce_scatter": lambda m, k, n, N: (N - 1) / N * m * n,  # N - 1 of C
}


def comm_bytes(strategy: str, m: int, k: int, n: int, num_devices: int, itemsize: int) -> float:
    """Bytes each device sends under ``strategy``: the closed forms above, at ``itemsize``."""
    return CLOSED_FORMS[strategy](m, k, n, num_devices) * itemsize


def _allgather_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.all_gather(a, axis_name, axis=1, tiled=True, to="invarying") @ b


def _allreduce_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum(a @ b, axis_name)


def _reduce_scatter_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.psum_scatter(a @ b, axis_name, scatter_dimension=0, tiled=True)


def _reshard_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return a @ jax.lax.all_gather(b, axis_name, axis=1, tiled=True)


def _gather_rows_oracle(a: Any, b: Any, axis_name: str) -> Any:
    import jax

    return jax.lax.all_gather(a, axis_name, axis=0, tiled=True) @ b


ORACLES = {
    "comm_bytes": comm_bytes,
    "matmul_case2": _allgather_oracle,
    "matmul_case3": _allreduce_oracle,
    "matmul_reduce_scatter": _reduce_scatter_oracle,
    "matmul_reshard": _reshard_oracle,
    "collective_matmul_allgather": _gather_rows_oracle,
    "collective_matmul_reduce_scatter": _reduce_scatter_oracle,
}
