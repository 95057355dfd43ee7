"""Reference solutions for 02_sharded_matmul, the hidden cases the grader adds, and the closed
forms (TARGETS) each part's traffic is held to: comm_bytes's own answer, per case.

Each function body here is the single source of the matching solution region in
assignments/source/02_sharded_matmul/02_sharded_matmul.ipynb (tests/specs/test_solutions_sync.py checks it).
"""

import jax
import jax.numpy as jnp

from autograder.core.tasks import DTYPE_BYTES, Case, Targets
from autograder.specs.given.sharded_matmul import CHOICES, global_mkn, matmul_cases
from autograder.specs.sharded_matmul import ASSIGNMENT


def comm_bytes(strategy, m, k, n, num_devices, itemsize):
    share = (num_devices - 1) / num_devices  # of an array, what one device sends in a ring
    values = {
        "matmul_allgather": share * m * k,  # all-gather A
        "matmul_allreduce": 2 * share * m * n,  # all-reduce C: a reduce-scatter, then an all-gather
        "matmul_gather_both": share * (m * k + k * n),  # all-gather A and B
        "matmul_reduce_scatter": share * m * n,
        "matmul_reshard": share * k * n,  # all-gather B
        "collective_matmul_allgather": share * m * k,  # N - 1 row blocks of A, m / N x k each
        "collective_matmul_reduce_scatter": share * m * n,  # N - 1 partial row blocks of C
    }
    return values[strategy] * itemsize


def matmul_case2(a, b, axis_name):
    columns, (k, n) = a.shape[1], b.shape
    if 2 * n < k:  # all-reducing C, 2 (N-1)/N mn, beats gathering A, (N-1)/N mk
        me = jax.lax.axis_index(axis_name)
        my_rows = jax.lax.dynamic_slice_in_dim(b, me * columns, columns, axis=0)  # the rows my columns meet
        return jax.lax.psum(a @ my_rows, axis_name)
    return jax.lax.all_gather(a, axis_name, axis=1, tiled=True, to="invarying") @ b


def matmul_case3(a, b, axis_name):
    n_devices = jax.lax.axis_size(axis_name)
    (m, columns), n = a.shape, b.shape[1]
    k = columns * n_devices
    if 2 * m * n <= m * k + k * n:  # all-reduce the partial sums, or gather both operands
        return jax.lax.psum(a @ b, axis_name)
    whole_a = jax.lax.all_gather(a, axis_name, axis=1, tiled=True, to="invarying")
    return whole_a @ jax.lax.all_gather(b, axis_name, axis=0, tiled=True, to="invarying")


def matmul_reduce_scatter(a, b, axis_name):
    return jax.lax.psum_scatter(a @ b, axis_name, scatter_dimension=0, tiled=True)


def matmul_reshard(a, b, axis_name):
    return a @ jax.lax.all_gather(b, axis_name, axis=1, tiled=True)


def collective_matmul_allgather(a, b, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    c = jnp.zeros((n, a.shape[0], b.shape[1]), a.dtype)
    block = a  # in step s: row block (me - s) % n of A, which came from device me - s
    for step in range(n):
        if step < n - 1:
            arriving = jax.lax.ppermute(block, axis_name, right)  # send on: nothing waits for it
        c = c.at[(me - step) % n].set(block @ b)
        if step < n - 1:
            block = arriving
    return c.reshape(n * a.shape[0], b.shape[1])


def collective_matmul_reduce_scatter(a, b, axis_name):
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    rows = a.shape[0] // n

    def term(chunk):  # this device's term of row block `chunk` of C
        return jax.lax.dynamic_slice_in_dim(a, chunk * rows, rows, axis=0) @ b

    partial = term((me - 1) % n)
    for step in range(1, n):
        # The next term needs nothing from the partial sum in flight: it can be computed meanwhile.
        partial = jax.lax.ppermute(partial, axis_name, right) + term((me - 1 - step) % n)
    return partial


def fixed_ring_matmul(a, b, axis_name):
    # Blocks travel left, so in step s this device holds the block of device me + s, not me - s.
    # On a ring of 2 the two are the same device, which is why the bug hid there.
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    left = [(i, (i - 1) % n) for i in range(n)]
    rows = a.shape[0]
    c = jnp.zeros((n * rows, b.shape[1]), a.dtype)
    block = a
    for step in range(n):
        owner = (me + step) % n
        c = jax.lax.dynamic_update_slice_in_dim(c, block @ b, owner * rows, axis=0)
        if step < n - 1:
            block = jax.lax.ppermute(block, axis_name, left)
    return c


HIDDEN_SIZES = (
    ("4:i", "i", 8, 16, 4, "bfloat16"),
    ("2x4:x,y", "x", 10, 6, 4, "float32"),
    # A long k, then a tall C: a ring that holds all of A, or the whole partial product, before
    # it sends needs several times the reference's memory at its peak.
    ("8:i", "i", 64, 256, 8, "float32"),
    ("8:i", "i", 256, 16, 64, "float32"),
)


def _hidden_matmul_cases(task):
    a, b = (inp.layout for inp in task.inputs)
    return matmul_cases(a, b, HIDDEN_SIZES)


HIDDEN_CASES = {
    "comm_bytes": tuple(
        Case(args=args)
        for args in (
            ("matmul_allgather", 12, 9, 6, 3, 2),  # thirds: no power of two divides evenly
            ("matmul_allreduce", 6, 6, 9, 3, 4),
            ("matmul_gather_both", 6, 9, 3, 3, 4),
            ("matmul_reshard", 8, 16, 4, 2, 2),
            ("collective_matmul_reduce_scatter", 64, 32, 16, 16, 2),
        )
    ),
    **{t.name: _hidden_matmul_cases(t) for t in ASSIGNMENT.tasks if t.kind == "shard_map"},
}


def _plan_bytes(plan, task, case):
    """Bytes per device of ``plan`` on the case's global sizes, at the case's dtype."""
    m, k, n = global_mkn(case, *(inp.layout for inp in task.inputs))
    return comm_bytes(plan, m, k, n, case.mesh_spec.axis_sizes[case.axis], DTYPE_BYTES[case.dtype])


def _targets(task):
    if task.name in CHOICES:  # the cheapest of the plans the student chooses between
        plans = lambda case: {plan: _plan_bytes(plan, task, case) for plan in CHOICES[task.name]}  # noqa: E731
        return Targets(comm_bytes=lambda case: min(plans(case).values()), plan_bytes=plans)
    return Targets(comm_bytes=lambda case: _plan_bytes(task.name, task, case))


TARGETS = {t.name: _targets(t) for t in ASSIGNMENT.tasks if t.kind == "shard_map"}
