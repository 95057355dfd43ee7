"""The planner counts each parameter's value and gradient but not the optimizer's two float32
moments: every device's memory is 8 bytes a parameter too low, so a split that does not fit
passes for one that does (on 8 H100s, the 48-layer model's batch of 32 goes to 4 x 2, which needs
81 GB of an 80 GB device), and every memory figure is wrong."""

EXPECTED = {
    "plan_split: values": 0,
    "plan_split: hidden values": 0,
}
REASONS = {
    "plan_split: values": "expected (8, 1,",
    "plan_split: hidden values": "expected",
}


def plan_split(model, batch, seq, hardware):
    n, b = hardware["devices"], model["bytes"]
    layers, d, f = model["layers"], model["d_model"], model["d_ff"]
    params = layers * (4 * d * d + 2 * d * f)
    compute = 6 * params * batch * seq / (n * hardware["flops"])

    def cost(data, tp):
        state = params * 2 * b / n
        activations = layers * batch / data * seq * (d + (4 * d + f) / tp) * b
        fsdp = 3 * (data - 1) / data * params / tp * b
        megatron = 4 * layers * 2 * (tp - 1) / tp * batch / data * seq * d * b
        return state + activations, compute + (fsdp + megatron) / hardware["bandwidth"]

    splits = [(data, n // data) for data in range(n, 0, -1) if n % data == 0]
    fits = [(data, tp, *cost(data, tp)) for data, tp in splits
            if batch % data == 0 and model["heads"] % tp == 0 and cost(data, tp)[0] <= hardware["memory"]]
    if not fits:
        raise ValueError("no split of the devices holds this model and batch")
    return min(fits, key=lambda plan: plan[3])
