"""A decode step's time with one all-reduce per layer where a tensor-parallel layer runs two (its
attention block's and its MLP's): right on one chip, wrong on more."""

EXPECTED = {"decode_time: values": 0, "decode_time: hidden values": 0}
REASONS = {"decode_time: values": "expected", "decode_time: hidden values": "expected"}


def decode_time(model, hardware, batch, context, chips):
    # Every weight and every cached key and value is read once per token, a chip's share on each chip.
    moved = model["params"] * model["bytes"] + cache_bytes(model, batch, context)
    flops = batch * (2 * model["params"] + 4 * model["layers"] * model["heads"] * model["head_dim"] * context)
    roofline = max(flops / hardware["flops"], moved / hardware["hbm"]) / chips
    # Two all-reduces a layer (attention, MLP) of the (batch, d_model) activations; a ring
    # all-reduce sends 2 (N - 1) / N of them from each chip, after the matmuls that make them.
    sent = model["layers"] * 2 * (chips - 1) / chips * batch * model["d_model"] * model["bytes"]
    return roofline + sent / hardware["link"]
