"""The cache's bytes counted over the query heads, as multi-head attention would hold them: with
grouped-query attention (every visible case) H/G times too much; right only where G = H."""

EXPECTED = {"cache_bytes: values": 0, "cache_bytes: hidden values": 0}
REASONS = {"cache_bytes: values": "expected", "cache_bytes: hidden values": "expected"}


def cache_bytes(model, batch, context):
    # A key and a value of kv_heads x head_dim for every layer, sequence and position.
    return 2 * model["layers"] * batch * context * model["heads"] * model["head_dim"] * model["bytes"]
