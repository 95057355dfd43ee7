"""The cache's bytes with the keys counted and the values forgotten: half of every case.
The notebook's decode_time calls it and loses its values too; plan_serving, which calls both,
still picks the right plan on the visible cases but not on every hidden one."""

EXPECTED = {
    "cache_bytes: values": 0,
    "cache_bytes: hidden values": 0,
    "decode_time: values": 0,
    "decode_time: hidden values": 0,
    "plan_serving: hidden values": 0,
}
REASONS = {
    "cache_bytes: values": "expected",
    "cache_bytes: hidden values": "expected",
    "decode_time: values": "expected",
    "decode_time: hidden values": "expected",
    "plan_serving: hidden values": "expected",
}


def cache_bytes(model, batch, context):
    # A key and a value of kv_heads x head_dim for every layer, sequence and position.
    return model["layers"] * batch * context * model["kv_heads"] * model["head_dim"] * model["bytes"]
