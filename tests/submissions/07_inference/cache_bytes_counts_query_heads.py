"""The cache's bytes counted over the query heads, as multi-head attention would hold them: with
grouped-query attention (every visible case) H/G times too much; right only where G = H.
The notebook's decode_time and plan_serving call it, as the part says they should, and are
graded against the plans of the right cost model: they lose their values too."""

EXPECTED = {
    "cache_bytes: values": 0,
    "cache_bytes: hidden values": 0,
    "decode_time: values": 0,
    "decode_time: hidden values": 0,
    "plan_serving: values": 0,
    "plan_serving: hidden values": 0,
}
REASONS = {
    "cache_bytes: values": "expected",
    "cache_bytes: hidden values": "expected",
    "decode_time: values": "expected",
    "decode_time: hidden values": "expected",
    "plan_serving: values": "expected",
    "plan_serving: hidden values": "expected",
}


def cache_bytes(model, batch, context):
    # A key and a value of kv_heads x head_dim for every layer, sequence and position.
    return 2 * model["layers"] * batch * context * model["heads"] * model["head_dim"] * model["bytes"]
