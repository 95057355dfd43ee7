"""A decode step's time from the weights' bytes alone, the cache forgotten: too fast wherever
the cache counts, which is every case here.
plan_serving, which calls it, then picks plans that are too small on every set of cases."""

EXPECTED = {
    "decode_time: values": 0,
    "decode_time: hidden values": 0,
    "plan_serving: values": 0,
    "plan_serving: hidden values": 0,
}
REASONS = {
    "decode_time: values": "expected",
    "decode_time: hidden values": "expected",
    "plan_serving: values": "expected",
    "plan_serving: hidden values": "expected",
}


def decode_time(model, hardware, batch, context, chips):
    # Every weight and every cached key and value is read once per token, a chip's share on each chip.
    moved = model["params"] * model["bytes"]  # the weights: the cache is small
    flops = batch * (2 * model["params"] + 4 * model["layers"] * model["heads"] * model["head_dim"] * context)
    roofline = max(flops / hardware["flops"], moved / hardware["hbm"]) / chips
    # Two all-reduces a layer (attention, MLP) of the (batch, d_model) activations; a ring
    # all-reduce sends 2 (N - 1) / N of them from each chip, after the matmuls that make them.
    sent = model["layers"] * 2 * 2 * (chips - 1) / chips * batch * model["d_model"] * model["bytes"]
    return roofline + sent / hardware["link"]
