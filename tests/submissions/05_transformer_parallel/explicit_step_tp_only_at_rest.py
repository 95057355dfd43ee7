"""The explicit step is the reference's but for its jit's out_shardings: the new state comes back
split over `model` only, whole over `data`. Called as a student's code runs (at the top level),
each device then holds twice the reference's state (and its jit cannot reuse the donated buffers):
tensor parallelism at rest, not FSDP x TP, so it keeps the values alone."""

EXPECTED = {
    "explicit_step: technique": 0,
    "explicit_step: memory": 0,
    "explicit_step: peak memory": 0,
}
REASONS = {
    "explicit_step: technique": "params/w1 is held (512 bytes per device)",
    "explicit_step: memory": "not checked until the technique holds",
    "explicit_step: peak memory": "not checked until the technique holds",
}


def explicit_step(params, opt_state, batch):
    weights = {"w1": jax.P("data", "model"), "w2": jax.P("model", "data")}
    tp_only = {"w1": jax.P(None, "model"), "w2": jax.P("model", None)}
    rows = jax.P("data", None)

    def step(params, mu, batch):
        def loss_of(params):
            whole = {
                "w1": jax.reshard(params["w1"], jax.P(None, "model")),
                "w2": jax.reshard(params["w2"], jax.P("model", None)),
            }
            return block_loss(whole, batch["x"], batch["y"], out_sharding=rows)

        loss, grads = jax.value_and_grad(loss_of)(params)
        params, mu = sgd_momentum(params, mu, grads)
        return params, mu, loss

    jitted = jax.jit(step, in_shardings=(weights, weights, rows), out_shardings=(tp_only, tp_only, jax.P()),
                     donate_argnums=(0, 1))
    params, mu, loss = jitted(params, opt_state["mu"], batch)
    return params, {"mu": mu}, loss
