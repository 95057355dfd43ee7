"""The roofline counts only the forward pass's 2 flops per parameter and token, not the backward
pass's 4 more: every compute time is a third of the truth, and so every critical batch (which
calls step_times) is three times too large."""

EXPECTED = {
    "step_times: values": 0,
    "step_times: hidden values": 0,
    "critical_batch: values": 0,
    "critical_batch: hidden values": 0,
}
REASONS = {
    "step_times: values": "expected (",
    "step_times: hidden values": "expected (",
    "critical_batch: values": "expected ",
    "critical_batch: hidden values": "expected ",
}


def step_times(strategy, model, hardware, tokens):
    n = hardware["devices"]
    compute = 2 * model["params"] * tokens / (n * hardware["flops"])
    ring = (n - 1) / n
    weights = model["params"] * model["bytes"]
    sent = {
        "dp": 2 * ring * weights,
        "fsdp": 3 * ring * weights,
        "tp": model["layers"] * 4 * (2 * ring * tokens * model["d_model"] * model["bytes"]),
    }
    return compute, sent[strategy] / hardware["bandwidth"]
