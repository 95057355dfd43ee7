"""matmul_case2 gathering A without to='invarying': every device computes the same, right C, but its type
says it varies along the axis, so it cannot be returned as P(). The whole task fails, and the
message says which sharding was asked for and what came back."""

EXPECTED = {
    "matmul_case2: values": 0,
    "matmul_case2: hidden values": 0,
    "matmul_case2: technique": 0,
    "matmul_case2: communication": 0,
}
REASONS = {
    "matmul_case2: values": "the task's output sharding is P(), so matmul_case2's result must be the same on every device along 'i'; the value returned varies along 'i'",
    "matmul_case2: hidden values": "the task's output sharding is P(), so matmul_case2's result must be the same on every device along 'i'; the value returned varies along 'i'",
    "matmul_case2: technique": "not checked until the values are right on at least one case",
    "matmul_case2: communication": "not checked until the values are right on at least one case",
}


def matmul_case2(a, b, axis_name):
    return jax.lax.all_gather(a, axis_name, axis=1, tiled=True) @ b
