"""A serving plan that gives each replica as many chips as it can, the fastest step first, instead
of the fewest that meet the latency: fewer replicas, fewer tokens a second, and a wrong plan
wherever a smaller split meets the target."""

EXPECTED = {"plan_serving: values": 0, "plan_serving: hidden values": 0}
REASONS = {"plan_serving: values": "expected", "plan_serving: hidden values": "expected"}


def plan_serving(model, hardware, chips, batch, context, latency):
    # The most chips per replica that hold the weights and the caches and meet the latency.
    for tp in range(chips, 0, -1):  # the fastest replica first
        if chips % tp or model["kv_heads"] % tp:
            continue
        held = (model["params"] * model["bytes"] + cache_bytes(model, batch, context)) / tp
        if held <= hardware["memory"] and decode_time(model, hardware, batch, context, tp) <= latency:
            return tp, chips // tp
    raise ValueError("no plan holds this model and batch within the latency")
