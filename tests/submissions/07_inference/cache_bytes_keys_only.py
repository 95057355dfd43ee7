"""The cache's bytes with the keys counted and the values forgotten: half of every case."""

EXPECTED = {"cache_bytes: values": 0, "cache_bytes: hidden values": 0}
REASONS = {"cache_bytes: values": "expected", "cache_bytes: hidden values": "expected"}


def cache_bytes(model, batch, context):
    # A key and a value of kv_heads x head_dim for every layer, sequence and position.
    return model["layers"] * batch * context * model["kv_heads"] * model["head_dim"] * model["bytes"]
