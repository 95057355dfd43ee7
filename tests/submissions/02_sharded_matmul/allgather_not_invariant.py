"""matmul_allgather without to='invarying': every device computes the same, right C, but its type
says it varies along the axis, so it cannot be returned as P(). The whole task fails, and the
message says which sharding was asked for and what came back."""

EXPECTED = {
    "matmul_allgather: values": 0,
    "matmul_allgather: hidden values": 0,
    "matmul_allgather: collectives": 0,
    "matmul_allgather: communication": 0,
}
REASONS = {
    "matmul_allgather: values": "the task's output sharding is P(), so matmul_allgather's result must be the same on every device along 'i'; the value returned varies along 'i'",
    "matmul_allgather: hidden values": "the task's output sharding is P(), so matmul_allgather's result must be the same on every device along 'i'; the value returned varies along 'i'",
    "matmul_allgather: collectives": "not checked until the values are right on at least one case",
    "matmul_allgather: communication": "not checked until the values are right on at least one case",
}


def matmul_allgather(a, b, axis_name):
    return jax.lax.all_gather(a, axis_name, axis=1, tiled=True) @ b
