"""comm_bytes returns values, forgetting the item size: right only where itemsize is 1 (never)."""

EXPECTED = {
    "comm_bytes: values": 0,
    "comm_bytes: hidden values": 0,
}
REASONS = {
    "comm_bytes: values": "('matmul_allgather', 32, 16, 8, 8, 4): returned 448.0, expected 1792.0",
    "comm_bytes: hidden values": "('matmul_allgather', 12, 9, 6, 3, 2): returned 72.0, expected 144.0",
}


def comm_bytes(strategy, m, k, n, num_devices, itemsize):
    share = (num_devices - 1) / num_devices
    values = {
        "matmul_allgather": share * m * k,
        "matmul_allreduce": 2 * share * m * n,
        "matmul_gather_both": share * (m * k + k * n),
        "matmul_reduce_scatter": share * m * n,
        "matmul_reshard": share * k * n,
        "collective_matmul_allgather": share * m * k,
        "collective_matmul_reduce_scatter": share * m * n,
    }
    return values[strategy]
